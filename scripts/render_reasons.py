"""Write docs/reasons.md from the reason registry: every stage's quarantine codes.

python scripts/render_reasons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def render() -> str:
    """Every registered stage's entry module is imported (each registers its codes, or imports
    the module that does), then the codes are listed stage by stage in the registry's order."""
    import importlib

    from benchfoundry.core.reasons import markdown, registered
    from benchfoundry.pipeline.registry import STAGES

    for stage in STAGES.values():
        importlib.import_module(stage.entry.partition(":")[0])
    found = registered()
    order = [*(s for s in STAGES if s in found), *sorted(set(found) - set(STAGES))]
    return markdown({stage: found[stage] for stage in order})


if __name__ == "__main__":
    (REPO / "docs" / "reasons.md").write_text(render(), encoding="utf-8")
    print(f"wrote {REPO / 'docs' / 'reasons.md'}")
