"""Quality control as a user runs it: `benchfoundry qc` on a run folder built from a few
synthetic scenes, with the embedded models (SmolLM2 without the image, SmolLM2 reading the
extracted facts, blind baselines), under a real Prefect flow run."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import CandidateRecord, JudgementRecord, ScoredRecord
from benchfoundry.storage.tables import RunFolder

pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.slow]


@pytest.fixture(scope="module")
def run_with_candidates(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("qc")
    runner = CliRunner()
    steps = [
        ["synth", "--out", str(tmp / "syn"), "--objects", "3", "--text", "1"],
        ["ingest", str(tmp / "syn" / "images"), "--out", str(tmp / "run")],
        ["extract", "--out", str(tmp / "run")],
        ["generate", "--out", str(tmp / "run")],
    ]
    for args in steps:
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return tmp / "run"


def test_qc_command_decides_every_candidate_and_reports(run_with_candidates):
    run = RunFolder(run_with_candidates)
    runner = CliRunner()
    result = runner.invoke(app, ["qc", "--out", str(run.root), "--target", "3", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    candidates = run.table(CandidateRecord).records()
    scored = run.table(ScoredRecord).records()
    assert {s.question_id for s in scored} == {c.question_id for c in candidates}
    assert all(s.decision and s.reason for s in scored)
    assert sum(summary["select"]["decisions"].values()) == len(candidates)
    text = {m["model"]: m for m in summary["filter"]["models"]}
    assert set(text) == {
        "smollm2",
        "blind/longest",
        "blind/similar",
        "blind/random",
        "blind/letter-A",
        "blind/frequent",
    }
    assert text["smollm2"]["sees"] == "nothing" and text["blind/random"]["counted"] is False
    (vlm,) = summary["consensus"]["models"]
    assert vlm["model"] == "facts-smollm2" and vlm["sees"] == "facts"
    assert {s.n_text_models for s in scored} == {3}  # smollm2 and the two artefact baselines
    # Consensus asks what the text-only step did not drop (options.consensus.ask_dropped)
    assert {s.n_vlm_models for s in scored if s.decision != "dropped"} == {1}
    assert {s.n_vlm_models for s in scored if s.decision == "dropped"} <= {0}
    judgements = run.table(JudgementRecord).records()
    assert {j.mode for j in judgements} == {"text_only", "consensus"}
    assert all(not j.with_image for j in judgements if j.mode == "text_only")
    for dimension in summary["select"]["dimensions"]:
        assert dimension["selected"] <= 3
        assert dimension["shortfall"] == 3 - dimension["selected"]
    report = Path(summary["report"])
    assert report.exists() and "## select: decisions" in report.read_text()
    plot = Path(summary["select"]["plot"])
    assert plot.read_bytes().startswith(b"\x89PNG")
    manifest = run.read_manifest()
    assert manifest["qc"]["steps"] == ["filter", "consensus", "select"]
    status = runner.invoke(app, ["status", "--out", str(run.root), "--json"])
    assert json.loads(status.stdout)["decisions"] == summary["select"]["decisions"]


def test_qc_rerun_answers_from_the_cache(run_with_candidates):
    runner = CliRunner()
    result = runner.invoke(app, ["qc", "--out", str(run_with_candidates), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    for step in ("filter", "consensus"):
        asked = summary[step]
        assert asked["calls_cached"] == asked["calls_made"] > 0


def test_qc_refuses_a_run_without_candidates_and_unknown_steps(tmp_path):
    runner = CliRunner()
    empty = runner.invoke(app, ["qc", "--out", str(tmp_path)])
    assert empty.exit_code == 1 and "run 'benchfoundry generate' first" in empty.output
    bad = runner.invoke(app, ["qc", "--out", str(tmp_path), "--steps", "filter,judge"])
    assert bad.exit_code == 1 and "--steps takes filter, consensus, select" in bad.output


def test_qc_uses_the_model_catalogue_the_spec_names(tmp_path, image_bytes, store_raw_image):
    run = RunFolder(tmp_path / "run")
    image = store_raw_image(run, image_bytes())
    run.table(CandidateRecord).append(
        [
            CandidateRecord(
                question_id="q1", image_id=image, dimension="d", question="Which is longest?",
                hint=None, options=["a", "a much longer option", "b"], answer="B", category=None,
                l2_category=None, split=None, generator="test", prompt_id=None,
                prompt_hash=None, evidence=[], source="test", meta={}, raw_output=None,
            )
        ]
    )  # fmt: skip
    catalogue = tmp_path / "models.yaml"
    catalogue.write_text(
        "models:\n  - {name: leak-finder, provider: blind, model: longest, roles: [text_only]}\n"
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: own\nsources: [{kind: packaged}]\nmodel_catalogue: models.yaml\n"
        "models: {text_only: [leak-finder]}\n"
        "options: {filter: {blind: [], chance: [], rules: [seed]}}\n"
    )
    result = CliRunner().invoke(
        app, ["qc", "--out", str(run.root), "--spec", str(spec), "--steps", "filter,select"]
    )
    assert result.exit_code == 0, result.output
    assert {j.model for j in run.table(JudgementRecord).records()} == {"leak-finder"}
    (scored,) = run.table(ScoredRecord).records()
    assert scored.decision == "dropped" and "leak-finder" in scored.reason
