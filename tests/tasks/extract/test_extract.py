"""The extract stage: facts for every image, incremental reruns, failures as quarantine rows."""

import pytest

from benchfoundry.core.records import QuarantineRecord, VisualFactsRecord
from benchfoundry.devtools.synthetic import write_corpus
from benchfoundry.devtools.testserver import Script, TestServer
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.models import FolderSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.storage.visual_context import FactsIndex
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.stage import build_extractors
from benchfoundry.tasks.extract.stage import run as extract_stage
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.stage import run as ingest_stage


@pytest.fixture
def run(tmp_path):
    write_corpus(tmp_path / "corpus", n_objects=4, n_text=2, seed=31)
    folder = RunFolder(tmp_path / "run")
    ingest_stage(
        StageRun.make(
            folder,
            sources=[FolderSource(path=tmp_path / "corpus" / "images")],
            ingest=IngestOptions(),
        )
    )
    return folder


def test_every_image_gets_facts_and_a_rerun_does_nothing(run):
    summary = extract_stage(StageRun.make(run, extract=ExtractOptions(batch_size=4)))
    facts = run.table(VisualFactsRecord).records()
    assert summary.images_extracted == len(facts) == 6 and summary.images_already_done == 0
    assert {f.config_hash for f in facts} == {summary.config_hash}
    roles = {"ocr", "segmenter", "captioner", "second_segmenter", "second_ocr"}
    assert all({e.role for e in f.extractors} == roles for f in facts)
    assert any(f.ocr_lines for f in facts) and any(f.instances for f in facts)
    # the second readings: objects by another method, text only where the first OCR read
    assert any(f.second_instances for f in facts)
    assert all(bool(f.second_ocr_lines) <= bool(f.ocr_lines) for f in facts)
    assert any(f.second_ocr_lines for f in facts)
    assert all(
        f.captions[0].backend == "composed" and "not a neural caption" in f.captions[0].text
        for f in facts
    )
    assert set(summary.seconds_by_backend) == {
        "segmenter", "describer", "ocr", "second segmenter", "second ocr", "captioner"
    }  # fmt: skip
    context = FactsIndex(facts).context(summary.example_image)
    assert context == summary.example_context and "Objects" in context
    again = extract_stage(StageRun.make(run, extract=ExtractOptions(batch_size=4)))
    assert (again.images_extracted, again.images_already_done) == (0, 6)
    other = extract_stage(StageRun.make(run, extract=ExtractOptions(ocr="none", captioner="none")))
    assert other.config_hash != summary.config_hash and other.images_extracted == 6
    assert run.table(VisualFactsRecord).count() == 12


def test_a_failing_image_is_quarantined_and_the_batch_goes_on(run, store_raw_image):
    garbage = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    store_raw_image(run, garbage, source="broken.png", size=(40, 40))
    summary = extract_stage(StageRun.make(run, extract=ExtractOptions(batch_size=3)))
    assert summary.images_extracted == 6 and summary.quarantined_by_reason == {"bad_pixels": 1}
    (row,) = [q for q in run.table(QuarantineRecord).records() if q.stage == "extract"]
    assert row.source == "broken.png" and row.reason == "bad_pixels"


def test_a_failing_model_is_quarantined_with_its_reason(run):
    from benchfoundry.devtools.testserver import Script, TestServer

    with TestServer(Script(default="A grey picture with shapes.")) as server:
        server.inject("500", times=5 * 2)
        options = ExtractOptions(
            ocr="none",
            segmenter="none",
            second_segmenter="none",
            second_ocr="none",
            captioner="vlm",
            captioner_model=f"openai/captioner@{server.base_url}",
        )
        extractors = build_extractors(options)
        assert [i.backend for i in extractors.infos] == ["vlm"]
        summary = extract_stage(StageRun.make(run, extract=options))
    assert summary.quarantined_by_reason == {"extractor_failed": 2}
    assert summary.images_extracted == 4
    captions = [f.captions[0].text for f in run.table(VisualFactsRecord).records()]
    assert captions == ["A grey picture with shapes."] * 4


def test_transparent_and_16_bit_images_reach_the_backends_visible():
    import numpy as np
    from PIL import Image, ImageDraw

    from benchfoundry.tasks.extract.stage import to_rgb

    clear = Image.new("RGBA", (120, 60), (0, 0, 0, 0))
    ImageDraw.Draw(clear).rectangle((20, 20, 60, 40), fill=(0, 0, 0, 255))
    rgb = np.asarray(to_rgb(clear))
    assert rgb[5, 5].tolist() == [255, 255, 255] and rgb[30, 40].tolist() == [0, 0, 0]
    deep = Image.fromarray((np.arange(64 * 64).reshape(64, 64) * 16).astype(np.uint16))
    values = np.asarray(to_rgb(deep))[:, :, 0]
    assert values.min() == 0 and values.max() == 255 and len(np.unique(values)) > 100


def test_the_configuration_hash_follows_only_what_changes_the_facts():
    base = build_extractors(ExtractOptions(ocr="none", captioner="none")).config_hash
    assert (
        build_extractors(
            ExtractOptions(
                ocr="none",
                captioner="none",
                batch_size=3,
                model_batch_size=2,
                context_max_chars=900,
                ocr_model_dir="/x",
                segmenter_checkpoint="/y",
            )
        ).config_hash
        == base
    )
    assert (
        build_extractors(ExtractOptions(ocr="none", captioner="none", max_instances=3)).config_hash
        != base
    )


def test_the_visual_context_cap_keeps_every_section():
    from benchfoundry.core.records import Caption, Instance, OcrLine
    from benchfoundry.storage.visual_context import render

    facts = VisualFactsRecord(
        image_id="i",
        config_hash="c",
        captions=[Caption(text="word " * 400, backend="composed", model=None)],
        instances=[
            Instance(
                box=[0, 0, 5, 5],
                mask_area=25,
                label=None,
                attributes=["red"],
                dense_caption=None,
                score=1.0,
            )
        ]
        * 3,
        ocr_lines=[OcrLine(text=f"line {i}", box=[0, 0, 1, 1], score=1.0) for i in range(40)],
        extractors=[],
    )
    for cap in (300, 1000, 2000):
        text = render(facts, cap)
        assert len(text) <= cap and "Captions:" in text and "Objects" in text
    assert '"line 0"' in render(facts, 2000) and "more lines left out" in render(facts, 300)


def test_a_vlm_captioner_with_an_unknown_model_fails_before_any_image(run):
    from benchfoundry.extractors.base import ExtractorUnavailable

    with pytest.raises(ExtractorUnavailable, match="captioner 'vlm'"):
        extract_stage(
            StageRun.make(run, extract=ExtractOptions(captioner="vlm", captioner_model="gpt5"))
        )
    assert run.table(VisualFactsRecord).count() == 0


def test_a_vlm_captioner_uses_the_specs_catalogue_and_its_usage_is_recorded(run, tmp_path):
    """The captioner is named only in the spec's catalogue; its calls land in RUN/usage.json
    under the extract stage, like every other stage's."""
    import json

    with TestServer(Script(default="A red square on grey.")) as server:
        catalogue = tmp_path / "models.yaml"
        catalogue.write_text(
            "models:\n"
            f"  - {{name: house-captioner, provider: openai, model: cap, base_url: '{server.base_url}',"
            " price_in_per_mtok: 1000}\n",
            encoding="utf-8",
        )
        options = ExtractOptions(
            ocr="none", segmenter="none", captioner="vlm", captioner_model="house-captioner"
        )
        summary = extract_stage(StageRun.make(run, extract=options, catalogue=str(catalogue)))
        assert summary.images_extracted > 0
        assert server.stats.by_model["cap"] == summary.images_extracted
    usage = json.loads((run.root / "usage.json").read_text())["extract"]["house-captioner"]
    assert usage["calls"] == summary.images_extracted and usage["cost"] > 0
    # Every model-written caption names the prompt template (prompts/caption.j2) and its hash.
    from benchfoundry.prompts import load

    template = load("caption")
    captions = [c for f in run.table(VisualFactsRecord).records() for c in f.captions]
    assert captions and all(c.text == "A red square on grey." for c in captions)
    assert {(c.prompt_id, c.prompt_hash) for c in captions} == {
        (template.prompt_id, template.version)
    }


@pytest.mark.slow
def test_a_batching_segmenter_gives_the_facts_of_one_by_one_and_isolates_a_failing_image(
    run, tmp_path, store_raw_image, caplog
):
    """hf-sam (a tiny random SAM) over batches of 4: the same facts as image by image, and an
    image it cannot take (3 px wide: 0 px at the tiny SAM's size) fails its batch, which is run
    again image by image, so that it alone is quarantined."""
    import io
    import logging

    from PIL import Image

    from benchfoundry.tasks.extract.stage import extract_batch, pending_batches
    from tests.extractors.test_tiny_models import _tiny_sam

    options = ExtractOptions(
        ocr="none",
        segmenter="hf-sam",
        segmenter_checkpoint=str(_tiny_sam(tmp_path / "sam")),
        batch_size=7,
        model_batch_size=4,
    )
    alone = build_extractors(options.model_copy(update={"model_batch_size": 1}))
    batched = build_extractors(options)
    assert (alone.segmenter.batch_size, batched.segmenter.batch_size) == (1, 4)
    assert alone.config_hash == batched.config_hash, "the batch size is no setting of the facts"
    (rows,) = pending_batches(run, batched.config_hash, 100)
    facts, one_by_one = extract_batch(rows, batched), extract_batch(rows, alone)
    assert len(facts.records) == 6 and not facts.rejections
    for many, one in zip(facts.records, one_by_one.records, strict=True):
        assert many.model_dump(exclude={"instances"}) == one.model_dump(exclude={"instances"})
        assert [i.model_dump(exclude={"score"}) for i in many.instances] == [
            i.model_dump(exclude={"score"}) for i in one.instances
        ]
        assert [i.score for i in many.instances] == pytest.approx(
            [i.score for i in one.instances], rel=1e-5
        )
    thin = io.BytesIO()
    Image.new("RGB", (3, 600), "white").save(thin, format="PNG")
    store_raw_image(run, thin.getvalue(), source="thin.png", size=(3, 600))
    with caplog.at_level(logging.INFO, logger="benchfoundry.tasks.extract.stage"):
        summary = extract_stage(StageRun.make(run, extract=options))
    assert "segmenter failed on a batch of" in caplog.text and "each alone" in caplog.text
    assert summary.images_extracted == 6 and summary.quarantined_by_reason == {
        "extractor_failed": 1
    }
    (row,) = [q for q in run.table(QuarantineRecord).records() if q.stage == "extract"]
    assert row.source == "thin.png" and "SAM: ValueError" in row.detail
