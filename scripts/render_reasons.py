"""Write docs/reasons.md from the reason registry: every stage's quarantine codes.

python scripts/render_reasons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# The stage modules that register reasons, in pipeline order.
STAGE_MODULES = ("tasks.ingest_items", "tasks.extract", "tasks.generate_drafts")


def render() -> str:
    import importlib

    from benchfoundry.reasons import markdown, registered

    for name in STAGE_MODULES:
        importlib.import_module(name)
    return markdown(registered())


if __name__ == "__main__":
    (REPO / "docs" / "reasons.md").write_text(render(), encoding="utf-8")
    print(f"wrote {REPO / 'docs' / 'reasons.md'}")
