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


def test_the_readme_build_spec_validates(tmp_path):
    import re as _re

    from benchfoundry.spec import load_spec

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = _re.search(r"## Build specs.*?```yaml\n(.*?)```", readme, flags=_re.S).group(1)
    path = tmp_path / "spec.yaml"
    path.write_text(block, encoding="utf-8")
    spec = load_spec(path)
    assert spec.stages == ["ingest", "extract", "generate", "filter", "consensus", "select"]
    assert spec.models["generator"] == ["gpt-4o-mini"]
    assert spec.options.select.target_for("text_understanding") == 100
