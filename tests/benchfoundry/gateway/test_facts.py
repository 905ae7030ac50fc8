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


def _facts_of(image_id: str) -> VisualFactsRecord:
    return VisualFactsRecord(
        image_id=image_id,
        config_hash="c1",
        captions=[Caption(text="A red square beside the word EXIT.", backend="t", model=None)],
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


def test_a_reader_of_some_parts_sees_only_them_and_is_cached_by_what_it_is_shown(
    tmp_path, image_bytes, store_raw_image
):
    from benchfoundry.gateway import ModelSpec, ResponseCache

    run = RunFolder(tmp_path)
    image = store_raw_image(run, image_bytes(seed=4))
    run.table(VisualFactsRecord).append([_facts_of(image)])
    ask = [{"type": "image", "value": image}, {"type": "text", "value": "Colour?"}]
    with TestServer(Script(default="B")) as server:
        inner = f"openai/reader@{server.base_url}"

        def reader(name: str, **options) -> ModelSpec:
            return ModelSpec(name=name, provider="facts", model=inner, options=options)

        catalogue = {
            "all": reader("all"),
            "objects": reader("objects", parts=["instances"]),
            "text": reader("text", parts=["ocr"]),
            "same-objects": reader("same-objects", parts="instances"),
        }
        cache = ResponseCache(tmp_path / "cache.sqlite")
        gateway = Gateway(
            catalogue, cache=cache, context=GatewayContext(images=RunImages(run), run=run)
        )
        assert [gateway.sees(m) for m in ("all", "objects", "text")] == [
            "facts",
            "facts: objects",
            "facts: text",
        ]
        seen = {}
        for model in ("all", "objects", "text", "same-objects"):
            reply = gateway.generate(model, ask)
            seen[model] = (reply.cached, server.stats.bodies[-1]["messages"][-1]["content"])
        assert server.stats.requests == 3, "each set of parts is shown other text: its own call"
        # Without an image every reader is its inner model shown the same text: one call, which
        # the inner model asked directly shares too.
        blind = [{"type": "text", "value": "Colour?"}]
        replies = [gateway.generate(m, blind) for m in ("all", "objects", "text", inner)]
        assert server.stats.requests == 4 and [r.cached for r in replies] == [
            False,
            True,
            True,
            True,
        ]
    assert seen["same-objects"][0], "the same parts, named by another entry: the same answers"
    objects, text = seen["objects"][1], seen["text"][1]
    assert "square at (10, 20, 50, 60); red" in objects
    assert "EXIT" not in objects and "A red square" not in objects
    assert '"EXIT"' in text and "square at" not in text and "objects only" not in text
    assert "visual facts, text only]" in text
    assert "A red square" in seen["all"][1] and "square at" in seen["all"][1]


def test_an_unknown_part_is_a_configuration_error(tmp_path):
    from benchfoundry.gateway import ModelSpec
    from benchfoundry.gateway.errors import ModelConfigError

    spec = ModelSpec(
        name="odd", provider="facts", model="blind/random", options={"parts": ["pixels"]}
    )
    with pytest.raises(ModelConfigError, match="odd.*options.parts.*unknown part"):
        Gateway({"odd": spec}, context=GatewayContext(run=RunFolder(tmp_path))).sees("odd")


def test_an_image_with_nothing_of_the_parts_is_not_shown(tmp_path, image_bytes, store_raw_image):
    from benchfoundry.gateway import ModelSpec, ResponseCache

    run = RunFolder(tmp_path)
    image = store_raw_image(run, image_bytes(seed=5))
    no_text = _facts_of(image).model_copy(update={"ocr_lines": []})
    run.table(VisualFactsRecord).append([no_text])
    question = {"type": "text", "value": "What does the sign say?"}
    with TestServer(Script(default="B")) as server:
        inner = f"openai/reader@{server.base_url}"
        catalogue = {
            "text": ModelSpec(name="text", provider="facts", model=inner, options={"parts": "ocr"})
        }
        gateway = Gateway(
            catalogue,
            cache=ResponseCache(tmp_path / "cache.sqlite"),
            context=GatewayContext(images=RunImages(run), run=run),
        )
        alone = gateway.generate(inner, [question])  # the inner model, without the image
        reply = gateway.generate("text", [{"type": "image", "value": image}, question])
        assert reply.cached and server.stats.requests == 1, "the very call its inner model made"
        # A reader of every part has the objects to read: it is shown them.
        every = catalogue["text"].model_copy(update={"name": "all", "options": {}})
        gateway.catalogue["all"] = every
        gateway.generate("all", [{"type": "image", "value": image}, question])
        assert server.stats.requests == 2 and "square at" in str(server.stats.bodies[-1])
    assert alone.text == reply.text


def test_a_readers_dtype_and_device_place_its_inner_local_model():
    """`facts/smollm2` with `dtype: float32` runs its SmolLM2 in float32 (cached as such),
    whatever the CPU's own precision; with `bfloat16`, its answers are keyed apart."""
    from benchfoundry.gateway.models import ModelSpec

    def reader(**options):
        spec = ModelSpec(name="r", provider="facts", model="smollm2", options=options)
        return Gateway({"r": spec}).provider("r")

    assert reader(dtype="float32", device="cpu").inner.spec.options == {
        "dtype": "float32",
        "device": "cpu",
    }
    assert "dtype" not in reader(dtype="float32").cache_identity()
    assert reader(dtype="bfloat16").cache_identity()["dtype"] == "bfloat16"
    assert "dtype" not in reader(max_chars=300).inner.spec.options
