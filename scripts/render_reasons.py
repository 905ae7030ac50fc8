"""Write docs/reasons.md from the reason registry: every stage's quarantine codes.

python scripts/render_reasons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# The stage modules that register reasons, and their stages, in pipeline order.
STAGE_MODULES = {
    "ingest": "benchfoundry.sources.items",
    "extract": "benchfoundry.tasks.extract.stage",
    "generate": "benchfoundry.tasks.generate.drafts",
}


def render() -> str:
    import importlib

    from benchfoundry.core.reasons import markdown, registered

    for name in STAGE_MODULES.values():
        importlib.import_module(name)
    found = registered()
    order = [*STAGE_MODULES, *sorted(set(found) - set(STAGE_MODULES))]
    return markdown({stage: found[stage] for stage in order if stage in found})


if __name__ == "__main__":
    (REPO / "docs" / "reasons.md").write_text(render(), encoding="utf-8")
    print(f"wrote {REPO / 'docs' / 'reasons.md'}")
