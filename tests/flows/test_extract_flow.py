import json

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import VisualFactsRecord
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")


def test_extract_command_runs_the_flow_and_prints_clean_json(tmp_path):
    runner = CliRunner()
    assert (
        runner.invoke(
            app, ["synth", "--out", str(tmp_path / "syn"), "--objects", "2", "--text", "1"]
        ).exit_code
        == 0
    )
    missing = runner.invoke(app, ["extract", "--out", str(tmp_path / "run")])
    assert missing.exit_code == 1 and "run folder" in missing.output
    assert "does not exist" in missing.output
    assert (
        runner.invoke(
            app, ["ingest", str(tmp_path / "syn" / "images"), "--out", str(tmp_path / "run")]
        ).exit_code
        == 0
    )
    result = runner.invoke(app, ["extract", "--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["images_extracted"] == 3 and summary["images_total"] == 3
    assert RunFolder(tmp_path / "run").table(VisualFactsRecord).count() == 3
    assert (
        RunFolder(tmp_path / "run").read_manifest()["extract"]["summary"]["config_hash"]
        == summary["config_hash"]
    )
    again = json.loads(
        runner.invoke(app, ["extract", "--out", str(tmp_path / "run"), "--json"]).stdout
    )
    assert again["images_extracted"] == 0 and again["images_already_done"] == 3
