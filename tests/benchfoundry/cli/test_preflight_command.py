"""The preflight through the command line: `build` stops before its first stage, naming the
model and what it lacks, on one line; `build --check` prints the report and its exit code."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from benchfoundry.cli import app

SPEC = """name: needs-a-key
sources: [{kind: packaged, packages: [scikit-image]}]
stages: [ingest, extract, generate]
models: {generator: [openai/gpt-4o-mini]}
output: run
"""


def _spec(tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return spec


def test_a_build_without_the_key_stops_before_any_stage(tmp_path, monkeypatch):
    spec = _spec(tmp_path, monkeypatch)
    result = CliRunner().invoke(app, ["build", str(spec)])
    assert result.exit_code == 1
    (line,) = [x for x in result.stderr.splitlines() if x.strip()]
    assert line.startswith("error: preflight:") and "openai/gpt-4o-mini" in line
    assert "OPENAI_API_KEY" in line and "models.generator" in line
    assert not (tmp_path / "run").exists()  # no stage ran, no run folder was made


def test_build_check_reports_and_exits_by_its_result(tmp_path, monkeypatch):
    spec = _spec(tmp_path, monkeypatch)
    failed = CliRunner().invoke(app, ["build", str(spec), "--check", "--json"])
    assert failed.exit_code == 1
    report = json.loads(failed.stdout)
    assert report["ok"] is False
    assert [m["name"] for m in report["results"] if not m["ok"]] == ["openai/gpt-4o-mini"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    passed = CliRunner().invoke(app, ["build", str(spec), "--check"])
    assert passed.exit_code == 0, passed.output
    assert "sk-test-not-a-real-key" not in passed.output
    assert not (tmp_path / "run").exists()
