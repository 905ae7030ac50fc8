"""The fact-reading model: image parts become the run's visual facts, as text."""

import pytest

from benchfoundry.core.records import Caption, Instance, OcrLine, VisualFactsRecord
from benchfoundry.devtools.testserver import Script, TestServer
from benchfoundry.gateway import Gateway, GatewayContext, ModelCallError
from benchfoundry.gateway.messages import RunImages
from benchfoundry.storage.tables import RunFolder


def test_fact_reader_sends_the_visual_context_instead_of_pixels(
    tmp_path, image_bytes, store_raw_image
):
    run = RunFolder(tmp_path)
    seen, unseen = image_bytes(seed=1), image_bytes(seed=2)
    seen_id = store_raw_image(run, seen)
    unseen_id = store_raw_image(run, unseen)
    run.table(VisualFactsRecord).append(
        [
            VisualFactsRecord(
                image_id=seen_id,
                config_hash="c1",
                captions=[
                    Caption(text="A red square on a grey background.", backend="test", model=None)
                ],
                instances=[
                    Instance(
                        box=[10, 20, 50, 60],
                        mask_area=1600,
                        label="square",
                        attributes=["red"],
                        dense_caption=None,
                        score=0.9,
                    )
                ],
                ocr_lines=[OcrLine(text="EXIT", box=[1, 2, 30, 12], score=0.99)],
                extractors=[],
            )
        ]
    )
    with TestServer(Script(default="B")) as server:
        gateway = Gateway(context=GatewayContext(images=RunImages(run), run=run))
        model = f"facts/openai/reader@{server.base_url}"
        reply = gateway.generate(
            model,
            [
                {"type": "image", "value": f"image_id:{seen_id}"},
                {"type": "text", "value": "What shape?"},
            ],
        )
        assert reply.text == "B" and gateway.sees(model) == "facts"
        content = server.stats.bodies[-1]["messages"][-1]["content"]
        assert isinstance(content, str), "no image part reaches the text model"
        assert (
            "A red square on a grey background." in content
            and "square at (10, 20, 50, 60); red" in content
        )
        assert '"EXIT"' in content and content.rstrip().endswith("What shape?")
        with pytest.raises(ModelCallError, match="no visual facts for image"):
            gateway.generate(
                model, [{"type": "image", "value": unseen_id}, {"type": "text", "value": "?"}]
            )


def test_new_facts_are_not_answered_from_the_cache(tmp_path, image_bytes, store_raw_image):
    from benchfoundry.gateway import ResponseCache

    run = RunFolder(tmp_path)
    image = store_raw_image(run, image_bytes(seed=3))

    def facts(config, caption):
        return VisualFactsRecord(
            image_id=image,
            config_hash=config,
            captions=[Caption(text=caption, backend="t", model=None)],
            instances=[],
            ocr_lines=[],
            extractors=[],
        )

    run.table(VisualFactsRecord).append([facts("b-later", "A blue circle.")])
    with TestServer(Script(default="B")) as server:
        model = f"facts/openai/reader@{server.base_url}"
        cache = ResponseCache(tmp_path / "cache.sqlite")
        ask = [{"type": "image", "value": image}, {"type": "text", "value": "Colour?"}]
        Gateway(cache=cache, context=GatewayContext(images=RunImages(run), run=run)).generate(
            model, ask
        )
        run.table(VisualFactsRecord).append([facts("a-first", "A red circle.")])  # now sorts first
        again = Gateway(
            cache=cache, context=GatewayContext(images=RunImages(run), run=run)
        ).generate(model, ask)
        assert not again.cached and server.stats.requests == 2
        assert "A red circle." in server.stats.bodies[-1]["messages"][-1]["content"]
