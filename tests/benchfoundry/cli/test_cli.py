import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.usefixtures("prefect_api")


def test_ingest_json_summary(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app, ["synth", "--out", str(tmp_path / "syn"), "--objects", "3", "--text", "2", "--faulty"]
    )
    assert result.exit_code == 0, result.output
    sources = [
        str(tmp_path / "syn" / "images"),
        str(tmp_path / "syn" / "questions.tsv"),
        str(tmp_path / "syn" / "faulty" / "images"),
    ]
    result = runner.invoke(app, ["ingest", *sources, "--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["images_added"] == 5 and payload["exact_duplicates"] == 5
    assert payload["quarantined_by_reason"] == {
        "empty_file": 1,
        "not_an_image": 1,
        "too_many_pixels": 1,
        "too_small": 1,
        "truncated_image": 1,
    }
    assert payload["tables"]["images"] == str(tmp_path / "run" / "images")
    status = runner.invoke(app, ["status", "--out", str(tmp_path / "run"), "--json"])
    assert json.loads(status.stdout)["table_rows"]["images"] == 5


def test_ingest_takes_options_from_a_spec(tmp_path, image_bytes):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(image_bytes((100, 80)))
    (tmp_path / "imgs" / "b.png").write_bytes(image_bytes((120, 95)))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: strict\nsources: [{kind: folder, path: imgs}]\noptions: {ingest: {min_side: 90}}\n"
    )
    result = CliRunner().invoke(
        app, ["ingest", "--spec", str(spec), "--out", str(tmp_path / "run"), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["quarantined_by_reason"] == {"too_small": 1}
    assert json.loads(result.stdout)["images_added"] == 1


def test_failures_exit_non_zero_with_one_line(tmp_path, prefect_api):
    bad = tmp_path / "bad.tsv"
    bad.write_text("index\timage\tquestion\tA\tB\n1\tx\tq\ta\tb\n", encoding="utf-8")
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    cli = [sys.executable, "-m", "benchfoundry"]
    done = subprocess.run(
        [*cli, "ingest", str(bad), "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: TSV {bad}: required column 'answer' is missing "
        "(found: index, image, question, A, B)"
    ]
    assert done.stdout == ""
    done = subprocess.run(
        [*cli, "build", str(tmp_path / "nope.yaml")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1 and "cannot read build spec" in done.stderr
    done = subprocess.run(
        [*cli, "ingest", "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1 and "at least one SOURCE" in done.stderr


def test_commands_take_a_run_folder_and_sources_by_url(tmp_path, image_bytes, monkeypatch):
    import fsspec

    from benchfoundry.storage.objects import Store

    monkeypatch.setenv("BENCHFOUNDRY_WORKDIR", str(tmp_path / "work"))
    root = f"/cli-{tmp_path.name}"
    fsspec.filesystem("memory").pipe(
        {f"{root}/in/a.png": image_bytes(seed=1), f"{root}/in/b.png": image_bytes(seed=2)}
    )
    runner = CliRunner()
    out = f"memory:/{root}/run"
    result = runner.invoke(app, ["ingest", f"memory:/{root}/in", "--out", out, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["images_added"] == 2
    assert Store(out).files("_commits") == ["_commits/00000001.json"]
    assert not Store(out).exists("_lock.json")
    status = runner.invoke(app, ["status", "--out", out, "--json"])
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["table_rows"]["images"] == 2
    assert len(Store(out).files("_commits")) == 1  # reading changed nothing: no new commit
