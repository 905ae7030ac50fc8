import io

import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageEnhance

from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    ImageSourceRecord,
    QuarantineRecord,
)
from benchfoundry.devtools.broken_inputs import write_faulty_images, write_faulty_tsv
from benchfoundry.devtools.synthetic import write_corpus
from benchfoundry.flows.ingest import ingest
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.models import FolderSource, TsvSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.ingest.options import IngestOptions

pytestmark = pytest.mark.usefixtures("prefect_api")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    write_corpus(root / "synthetic", n_objects=6, n_text=3, seed=7)
    write_faulty_images(root / "faulty")
    write_faulty_tsv(root / "faulty.tsv")
    return root


def _sources(corpus):
    return [
        FolderSource(path=corpus / "synthetic" / "images"),
        TsvSource(path=corpus / "synthetic" / "questions.tsv"),
        FolderSource(path=corpus / "faulty"),
        TsvSource(path=corpus / "faulty.tsv"),
    ]


def _snapshot(run: RunFolder) -> dict:
    return {
        t.table: sorted(map(repr, run.table(t).read().to_pylist()))
        for t in (ImageRecord, ImageSourceRecord, CandidateRecord, QuarantineRecord)
    }


def test_ingest_flow_stores_everything_once_and_quarantines_the_rest(corpus, tmp_path):
    run = RunFolder(tmp_path / "run")
    summary = ingest(
        StageRun.make(str(run.root), sources=_sources(corpus), ingest=IngestOptions(batch_size=4))
    )
    images = run.table(ImageRecord).records()
    # 9 synthetic scenes (the TSV gives them again as base64: merged) + the one picture that
    # four readable rows of faulty.tsv share (merged too)
    assert summary.images_added == len(images) == 10
    assert summary.exact_duplicates == 9 + 3
    assert {i.image_id for i in images} == {
        r.image_id for r in run.table(ImageSourceRecord).records()
    }
    assert len(run.table(ImageSourceRecord).records()) == summary.images_decoded == 22
    assert all(Image.open(io.BytesIO(i.bytes)).size == (i.width, i.height) for i in images)
    reasons = summary.quarantined_by_reason
    for reason in (
        "empty_file",
        "truncated_image",
        "not_an_image",
        "too_small",
        "too_many_pixels",
        "bad_base64",
        "answer_not_in_options",
        "duplicate_index",
        "empty_question",
        "bad_image_reference",
        "option_gap",
        "non_utf8",
    ):
        assert reasons.get(reason) == 1, reason
    quarantine = run.table(QuarantineRecord).records()
    assert len(quarantine) == sum(reasons.values()) == summary.quarantine_added
    assert all(q.detail and q.stage == "ingest" for q in quarantine)
    candidates = run.table(CandidateRecord).records()
    assert len(candidates) == summary.candidates_added == summary.seed_questions_read
    assert {c.image_id for c in candidates} <= {i.image_id for i in images}
    assert all(
        c.generator == "seed:tsv" and c.answer in "ABCD"[: len(c.options)] for c in candidates
    )
    manifest = run.read_manifest()
    assert manifest["ingest"]["summary"]["images_added"] == 10
    assert pq.read_table(run.table(ImageRecord).parts()[0]).column_names[0] == "image_id"


def test_ingesting_twice_changes_nothing(corpus, tmp_path):
    run = RunFolder(tmp_path / "run")
    ingest(StageRun.make(str(run.root), sources=_sources(corpus)))
    before, parts = (
        _snapshot(run),
        sorted(
            p.name
            for t in ("images", "candidates", "quarantine")
            for p in (run.root / t).glob("part-*")
        ),
    )
    again = ingest(StageRun.make(str(run.root), sources=_sources(corpus)))
    assert (again.images_added, again.candidates_added, again.quarantine_added) == (0, 0, 0)
    assert (
        again.images_already_stored == 10
        and again.candidates_already_stored == again.seed_questions_read
    )
    assert _snapshot(run) == before
    assert (
        sorted(
            p.name
            for t in ("images", "candidates", "quarantine")
            for p in (run.root / t).glob("part-*")
        )
        == parts
    )


def test_near_duplicates_point_at_the_first_image_across_runs(tmp_path, image_bytes):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "photo.png").write_bytes(image_bytes((320, 240), seed=5))
    # smaller, brighter and recompressed: a few bits away from the original
    altered = Image.open(io.BytesIO(image_bytes((320, 240), seed=5))).resize((288, 216))
    altered = ImageEnhance.Brightness(altered).enhance(1.3)
    buffer = io.BytesIO()
    altered.save(buffer, format="JPEG", quality=80)
    (second / "photo-small.jpg").write_bytes(buffer.getvalue())
    (second / "other.png").write_bytes(image_bytes((320, 240), seed=6))
    run = RunFolder(tmp_path / "run")
    ingest(StageRun.make(str(run.root), sources=[FolderSource(path=first)]))
    summary = ingest(StageRun.make(str(run.root), sources=[FolderSource(path=second)]))
    assert summary.near_duplicates == 1
    by_file = {i.source.rsplit("/", 1)[1]: i for i in run.table(ImageRecord).records()}
    assert by_file["photo-small.jpg"].duplicate_of == by_file["photo.png"].image_id
    assert 0 < by_file["photo-small.jpg"].duplicate_distance <= 4
    assert by_file["other.png"].duplicate_of is None

    strict = RunFolder(tmp_path / "strict")
    result = ingest(
        StageRun.make(
            str(strict.root),
            sources=[FolderSource(path=first), FolderSource(path=second)],
            ingest=IngestOptions(near_duplicate_distance=0),
        )
    )
    assert result.near_duplicates == 0
