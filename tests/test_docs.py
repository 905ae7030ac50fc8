"""The docs list what the code does: every quarantine reason and every table column."""

import re
from pathlib import Path

from benchfoundry.records import ALL_RECORDS, arrow_schema
from tasks.ingest_items import REASONS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_ingest_reason_is_documented():
    text = (DOCS / "ingest.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \|", text, flags=re.M))
    assert set(REASONS) <= documented


def test_every_table_column_is_documented():
    text = (DOCS / "tables.md").read_text(encoding="utf-8")
    for record in ALL_RECORDS:
        section = text.split(f"## `{record.table}`", 1)[1].split("\n## ", 1)[0]
        for field in arrow_schema(record):
            assert f"| `{field.name}` | `{field.type}` |" in section, (record.table, field.name)
