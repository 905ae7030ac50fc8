from pathlib import Path

import pytest

from benchfoundry.core.records import CandidateRecord, ImageRecord
from benchfoundry.flows.build import build
from benchfoundry.pipeline.spec import load_spec
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")
REPO = Path(__file__).resolve().parents[2]


DEMO = REPO / "datasets" / "demo.yaml"
DATA = REPO / "benchfoundry" / "data" / "demo"


def _demo_sample(folder: Path) -> Path:
    """The shipped demo spec with its `sources` replaced by a sample of the demo's own data, one
    of each kind (two packaged photos, a synthetic scene of each family, two single-action clips
    and a three-step procedure), and every other part of it (options, models, taxonomy) as
    shipped; returns the spec's path."""
    import json
    import shutil

    import yaml

    images = folder / "synthetic"
    images.mkdir(parents=True)
    for name in ("objects-000", "text-000", "contact-000", "flat-000"):
        shutil.copy(DATA / "synthetic" / "images" / f"{name}.png", images)
    clips = folder / "clips"
    clips.mkdir()
    labels = json.loads((DATA / "video" / "clips" / "labels.json").read_text(encoding="utf-8"))
    for clip in ("1000", "1001"):
        shutil.copy(DATA / "video" / "clips" / f"{clip}.mp4", clips)
    kept = [label for label in labels if label["id"] in ("1000", "1001")]
    (clips / "labels.json").write_text(json.dumps(kept), encoding="utf-8")
    procedures = folder / "procedures"
    procedures.mkdir()
    shutil.copy(DATA / "video" / "procedures" / "procedure_00.mp4", procedures)
    rows = (DATA / "video" / "procedures" / "segments.csv").read_text(encoding="utf-8")
    header, *steps = rows.splitlines()
    (procedures / "segments.csv").write_text(
        "\n".join([header] + [r for r in steps if r.startswith("procedure_00.mp4,")]) + "\n",
        encoding="utf-8",
    )
    shipped = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    scenes = next(s for s in shipped["sources"] if s.get("path", "").endswith("synthetic/images"))
    spec = {
        **shipped,
        "sources": [
            {"kind": "packaged", "packages": ["scikit-learn"]},
            {**scenes, "path": "synthetic"},  # its licence and meta as shipped
            {
                "kind": "videos",
                "path": "clips",
                "annotations": "clips/labels.json",
                "format": "ssv2",
            },
            {
                "kind": "videos",
                "path": "procedures",
                "annotations": "procedures/segments.csv",
                "format": "segments",
            },
        ],
        "output": "run",
    }
    path = folder / "demo-sample.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def test_demo_build_runs_ingest_and_reports(tmp_path):
    """The demo spec as shipped ingests every source it names, and its extract and generate
    stages, with the spec's own options and models, turn a sample of each kind of the demo's
    data into facts from every extractor it names and questions in every temporal dimension.
    (Extracting all of the demo's 230 images took two minutes of the suite; quality control of
    the whole demo takes minutes more: tests/flows/test_qc_flow.py runs it on a few scenes with
    the same models.)"""
    summary = build(str(DEMO), str(tmp_path / "demo"), stages=["ingest"])
    run = RunFolder(tmp_path / "demo")
    assert summary.run == str(run.root) and summary.stages == ["ingest"]
    assert summary.table_rows["images"] >= 40
    images = run.table(ImageRecord).records()
    kinds = {i.source_kind for i in images}
    assert {"packaged", "folder", "keyframe"} <= kinds
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
    assert summary.table_rows["candidates"] == 84  # the reference questions
    manifest = run.read_manifest()
    assert manifest["build"]["spec"]["name"] == "demo" and len(manifest["build"]["spec_hash"]) == 16
    ingested = manifest["ingest"]["summary"]
    assert ingested["images_added"] + ingested["keyframes_added"] == summary.table_rows["images"]
    # The demo's clips: each stored once (by content).
    assert ingested["clips_read"] == 22 and summary.table_rows["clips"] == ingested["clips_added"]

    sample = _demo_sample(tmp_path / "sample")
    ours, shipped = load_spec(sample), load_spec(DEMO)
    beside = {"publish": {"to"}}  # a path, resolved beside each spec
    assert ours.options.model_dump(exclude=beside) == shipped.options.model_dump(exclude=beside)
    assert (ours.models, ours.taxonomy) == (shipped.models, shipped.taxonomy)
    summary = build(str(sample), stages=["ingest", "extract", "generate"])
    images = summary.table_rows["images"]
    assert images == 2 + 4 + summary.of("ingest").keyframes_added
    assert summary.of("generate").candidates > 20 and summary.of("generate").by_generator
    assert (
        summary.table_rows["candidates"] == summary.of("generate").candidates_added
        and len(summary.examples) == 3
    )
    # questions in SEED-Bench's three temporal dimensions, from the clips' keyframes
    assert {"action_recognition", "action_prediction", "procedure_understanding"} <= set(
        summary.of("generate").per_dimension
    )
    assert summary.table_rows["visual_facts"] == images
    assert (
        summary.of("extract").images_extracted == images and summary.of("extract").example_context
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
