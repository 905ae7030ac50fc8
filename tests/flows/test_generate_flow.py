import json

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import CandidateRecord
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")


def test_generate_command_writes_candidates_from_facts(tmp_path):
    runner = CliRunner()
    assert (
        runner.invoke(
            app, ["synth", "--out", str(tmp_path / "syn"), "--objects", "3", "--text", "1"]
        ).exit_code
        == 0
    )
    run = tmp_path / "run"
    assert (
        runner.invoke(
            app, ["ingest", str(tmp_path / "syn" / "images"), "--out", str(run)]
        ).exit_code
        == 0
    )
    early = runner.invoke(app, ["generate", "--out", str(run)])
    assert early.exit_code == 1 and "run 'benchfoundry extract' first" in early.output
    assert runner.invoke(app, ["extract", "--out", str(run)]).exit_code == 0
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: t\nsources: [{kind: packaged}]\ntaxonomy: mmbench\noptions: {generate: {max_options: 4}}\n"
    )
    result = runner.invoke(app, ["generate", "--out", str(run), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["taxonomy"] == "mmbench" and summary["candidates"] > 5
    candidates = RunFolder(run).table(CandidateRecord).records()
    assert {c.dimension for c in candidates} <= {
        "object_localization",
        "attribute_recognition",
        "ocr",
        "spatial_relationship",
        "attribute_comparison",
    }
    assert all(c.generator.startswith("template:") and c.evidence for c in candidates)
    assert RunFolder(run).read_manifest()["generate"]["taxonomy"] == "mmbench"
    again = json.loads(
        runner.invoke(app, ["generate", "--out", str(run), "--spec", str(spec), "--json"]).stdout
    )
    assert again["candidates_added"] == 0 and again["candidates"] == summary["candidates"]
