"""The docs list what the code does: every quarantine reason and every table column."""

import re
from pathlib import Path

from benchfoundry.core.records import ALL_RECORDS, arrow_schema
from benchfoundry.sources.items import REASONS

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

    from benchfoundry.pipeline.spec import load_spec

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = _re.search(r"## Build specs.*?```yaml\n(.*?)```", readme, flags=_re.S).group(1)
    path = tmp_path / "spec.yaml"
    path.write_text(block, encoding="utf-8")
    spec = load_spec(path)
    assert spec.stages == ["ingest", "extract", "generate", "filter", "consensus", "select"]
    assert spec.models["generator"] == ["gpt-4o-mini"]
    assert spec.options.select.target_for("text_understanding") == 100


def test_the_reasons_page_is_rendered_from_the_registry():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "render_reasons", DOCS.parent / "scripts" / "render_reasons.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (DOCS / "reasons.md").read_text(encoding="utf-8") == module.render(), (
        "run: python scripts/render_reasons.py"
    )


def test_a_rejection_needs_a_registered_reason():
    import pytest

    from benchfoundry.core.reasons import Rejection

    assert Rejection("x", "tsv", "no_rows", "d").to_record().reason == "no_rows"
    with pytest.raises(ValueError, match="not registered for stage ingest"):
        Rejection("x", "tsv", "made_up_reason", "d")


def test_every_gate_check_and_release_column_is_documented():
    from benchfoundry.tasks.publish.files import columns
    from benchfoundry.validation.gate import checks_file

    text = (DOCS / "publish.md").read_text(encoding="utf-8")
    for check in checks_file():
        assert re.search(rf"^\| `{re.escape(check['id'])}(\[X\])?` \|", text, flags=re.M), check
    for name, _, _ in columns("ABCD"):
        if name not in "ABCD":
            assert re.search(rf"^\| [^|]*`{name}`", text, flags=re.M), name


def test_the_options_reference_is_made_from_the_options_models():
    """docs/options.md is what the options models say today: every stage, every key with a
    description (regenerate with `python -m benchfoundry.devtools.options_doc`)."""
    from benchfoundry.devtools.options_doc import render
    from benchfoundry.pipeline.registry import STAGES

    text = (DOCS / "options.md").read_text(encoding="utf-8")
    assert text == render(), "docs/options.md is stale: python -m benchfoundry.devtools.options_doc"
    for name, stage in STAGES.items():
        for key in stage.options_type().model_fields:
            row = next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))
            assert not row.endswith("|  |"), f"options.{name}.{key} has no description"
