"""Local transformers models: the packaged SmolLM2, and a tiny randomly initialised VLM that the
test builds and saves itself (real code path, meaningless answers)."""

import pytest

from benchfoundry.gateway import Gateway, GenerateParams, Request
from benchfoundry.gateway.messages import ImagePart, TextPart

pytestmark = pytest.mark.slow


def test_smollm2_generates_and_scores_options():
    gateway = Gateway()
    assert gateway.sees("smollm2") == "nothing"
    reply = gateway.generate("smollm2", "Name a colour of the sky.", GenerateParams(max_tokens=8))
    assert reply.text and 0 < reply.tokens_out <= 8 and reply.tokens_in > 5
    again = gateway.generate("smollm2", "Name a colour of the sky.", GenerateParams(max_tokens=8))
    assert again.text == reply.text, "greedy decoding is deterministic"
    scores = gateway.score_options(
        "smollm2", "The sky on a clear day is", ["blue", "made of cheese and old shoes"]
    )
    assert len(scores.summed) == 2 and scores.n_tokens[1] > scores.n_tokens[0]
    assert all(s < 0 for s in scores.summed)
    assert scores.normalised[1] == pytest.approx(scores.summed[1] / scores.n_tokens[1])
    assert scores.best(normalised=False) == 0
    with pytest.raises(Exception, match="reads text only"):
        gateway.generate(
            "smollm2", [{"type": "image", "value": b"\x89PNG..."}, {"type": "text", "value": "?"}]
        )


def _tiny_vlm(folder):
    """A LLaVA-style model with a one-layer CLIP encoder and a one-layer Llama, random weights,
    a word-level tokenizer and a chat template: everything the real loading path needs."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    words = [
        "<pad>",
        "<s>",
        "</s>",
        "<unk>",
        "<image>",
        *["what", "colour", "is", "it", "red", "blue", "user", "assistant", ":", "?"],
    ]
    vocab = {w: i for i, w in enumerate(words)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
    )
    fast.add_special_tokens({"additional_special_tokens": ["<image>"]})
    template = (
        "{% for m in messages %}{{ m['role'] }} : {% for c in m['content'] %}{% if c['type'] == 'image' %}<image> "
        "{% else %}{{ c['text'] }} {% endif %}{% endfor %}\n{% endfor %}{% if add_generation_prompt %}assistant : {% endif %}"
    )
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=fast,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=template,
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        ),
        text_config=LlamaConfig(
            vocab_size=len(words),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=128,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
        ),
        image_token_index=vocab["<image>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    import torch

    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def test_a_local_vision_language_model_reads_images(tmp_path, image_bytes):
    folder = _tiny_vlm(tmp_path / "tiny-vlm")
    gateway = Gateway()
    model = f"hf/{folder}"
    assert gateway.sees(model) == "pixels"
    messages = [
        {"type": "image", "value": image_bytes()},
        {"type": "text", "value": "what colour is it ?"},
    ]
    reply = gateway.generate(model, messages, GenerateParams(max_tokens=4))
    assert 1 <= reply.tokens_out <= 4
    assert reply.finish_reason == ("length" if reply.tokens_out == 4 else "stop")
    assert reply.tokens_in > 4, "the image's tokens are part of the prompt"
    assert gateway.generate(model, messages, GenerateParams(max_tokens=4)).text == reply.text
    scores = gateway.score_options(model, messages, ["red", "blue"])
    assert scores.n_tokens == [1, 1] and all(s < 0 for s in scores.summed)


def test_many_threads_share_one_load_and_scoring_failures_are_typed(tmp_path, image_bytes):
    from benchfoundry.gateway import ModelCallError, Request, ResponseCache

    folder = _tiny_vlm(tmp_path / "tiny-vlm")
    gateway = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"))
    messages = [
        {"type": "image", "value": image_bytes()},
        {"type": "text", "value": "what colour is it ?"},
    ]
    requests = [
        Request(f"hf/{folder}", messages, GenerateParams(max_tokens=2, seed=i, temperature=0.5))
        for i in range(6)
    ]
    results = gateway.generate_many(requests, workers=6)
    assert all(not isinstance(r, ModelCallError) for r in results)
    first = gateway.score_options(f"hf/{folder}", messages, ["red", "blue"])
    assert gateway.score_options(f"hf/{folder}", messages, ["red", "blue"]) == first
    assert gateway.ledger.entries[("", f"hf/{folder}")].cached == 1
    with pytest.raises(ModelCallError, match="no_vision"):
        gateway.score_options("smollm2", messages, ["red", "blue"])


def test_smollm2_answers_the_same_alone_and_in_a_batch():
    gateway = Gateway()
    prompts = [
        "Name a colour of the sky.",
        "Question: How many legs has a dog?\nOptions:\nA. 2\nB. 4\nAnswer with the letter.",
        "Say hello.",
    ]
    params = GenerateParams(max_tokens=12)
    together = gateway.generate_many([Request("smollm2", p, params) for p in prompts])
    provider = gateway.provider("smollm2")
    assert max(provider._batcher.batches) > 1, "the parallel calls were batched"
    # The reference: each prompt through the unbatched path.
    alone = [provider._generate_one([TextPart(value=p)], params) for p in prompts]
    assert [r.text for r in together] == [c.text for c in alone]
    assert [r.tokens_in for r in together] == [c.tokens_in for c in alone]
    assert [r.tokens_out for r in together] == [c.tokens_out for c in alone]


def test_option_scores_are_the_same_when_a_prompt_continues_from_a_shared_prefix():
    """Questions about one image share the long facts part of their prompt: on the unpacked
    path (`pack: false`, the one a model that cannot take a 4D mask takes) the second is
    continued from the first's keys and values, and scores as a fresh run does."""
    from benchfoundry.gateway.models import ModelSpec

    facts = (
        "[Image described by extracted visual facts]\n"
        + "A red circle at the top left, a blue square in the middle, a green triangle at the "
        "bottom right, and the words OPEN DAILY written in black along the lower edge. " * 3
    )
    questions = [
        ("What colour is the circle?", ["red", "blue", "green", "black"]),
        ("Which shape is in the middle?", ["a circle", "a square", "a triangle", "a star"]),
        ("What do the words say?", ["OPEN DAILY", "CLOSED", "SALE", "EXIT"]),
    ]
    # float32: the continuation is checked to its precision (bfloat16 rounds each layout apart)
    shared = Gateway(
        {"m": ModelSpec(name="m", provider="smollm2", options={"pack": False, "dtype": "float32"})}
    )
    fresh = Gateway(
        {
            "m": ModelSpec(
                name="m",
                provider="smollm2",
                options={"pack": False, "prefix_cache": 0, "dtype": "float32"},
            )
        }
    )
    for question, options in questions:
        messages = [{"type": "text", "value": f"{facts}\nQuestion: {question}\nAnswer:"}]
        a = shared.score_options("m", messages, options)
        b = fresh.score_options("m", messages, options)
        assert a.summed == pytest.approx(b.summed, abs=1e-3)
        assert a.best(normalised=True) == b.best(normalised=True)
    prefixes = shared.provider("m")._prefixes
    assert prefixes.hits == 2 and prefixes.tokens_saved > 2 * 100
    assert fresh.provider("m")._prefixes.hits == 0


def test_many_questions_scored_together_score_as_each_alone(tmp_path):
    """Questions about two images and one without any, with options of one and of several
    tokens and tails of different lengths, scored in one batch: the numbers are those of each
    question's whole prompt run on its own, and a bad question fails alone."""
    from benchfoundry.gateway import ResponseCache
    from benchfoundry.gateway.errors import ProviderError
    from benchfoundry.gateway.models import ModelSpec

    spec = ModelSpec(name="m", provider="smollm2", options={"dtype": "float32"})
    gateway = Gateway({"m": spec}, ResponseCache(tmp_path / "cache.sqlite"))
    provider = gateway.provider("m")
    facts = {
        "a": "[Image described by extracted visual facts]\nA red circle above a blue square.",
        "b": "[Image described by extracted visual facts]\nThe words OPEN DAILY on a green door.",
    }
    asked = [
        ("a", "What colour is the circle?", ["bright red", "blue", "green", "purple"]),
        (
            "a",
            "Which shape is below the circle, if you look at it closely?",
            ["a square", "a star"],
        ),
        ("b", "What do the words say?", ["OPEN DAILY", "CLOSED FOR THE WINTER", "SALE", "EXIT"]),
        (None, "Is the sky blue?", ["yes", "no"]),
        ("b", "What colour is the door?", ["green", "  "]),  # an option with no tokens
        ("b", "Is it a door?", ["yes, it is a door", "no"]),
    ]
    items = [
        (
            ([TextPart(value=facts[image])] if image else [])
            + [TextPart(value=f"Question: {q}\nAnswer:")],
            options,
        )
        for image, q, options in asked
    ]
    image = ImagePart(data=b"\x89PNG\r\n\x1a\n", sha256="0" * 64)
    items.append(([image, TextPart(value="Question: What is it?\nAnswer:")], ["a cat", "a dog"]))
    together = provider.score_options_many(items)
    assert isinstance(together[4], ProviderError) and together[4].kind == "bad_input"
    # A text model given an image fails that question alone; the others are scored together.
    assert isinstance(together[6], ProviderError) and together[6].kind == "no_vision"
    items.pop()
    for (parts, options), scores in zip(items, together, strict=False):
        if isinstance(scores, ProviderError):
            continue
        alone = provider._score_alone(parts, options)
        assert scores.n_tokens == alone.n_tokens
        assert scores.summed == pytest.approx(alone.summed, abs=1e-3)
        assert scores.best(normalised=True) == alone.best(normalised=True)
    # Through the gateway: the same scores, cached one by one, the bad question its own error.
    messages = [[{"type": "text", "value": p.value} for p in parts] for parts, _ in items]
    through = gateway.score_options_many(
        "m", list(zip(messages, [o for _, o in items], strict=True))
    )
    assert [type(r).__name__ for r in through] == [
        "OptionScores",
        "OptionScores",
        "OptionScores",
        "OptionScores",
        "ModelCallError",
        "OptionScores",
    ]
    assert through[0].summed == pytest.approx(together[0].summed, abs=1e-3)
    assert gateway.score_options("m", messages[2], items[2][1]) == through[2], (
        "replayed from the cache"
    )


def test_a_clip_to_a_local_model_without_a_video_processor_fails_saying_so(tmp_path, image_bytes):
    """`video: true` on a local model whose processor takes no videos is a typed failure, never
    a prompt sent without its clip; the same model shown frames reads them as images."""
    import numpy as np

    from benchfoundry.core.video import encode_clip
    from benchfoundry.gateway import ModelCallError
    from benchfoundry.gateway.models import ModelSpec

    folder = _tiny_vlm(tmp_path / "tiny-vlm")
    clip = encode_clip([np.full((32, 32, 3), 8 * i, np.uint8) for i in range(12)], fps=12)
    shown = [
        {"type": "video", "value": clip, "start": 0.0, "end": 1.0, "keyframe": image_bytes()},
        {"type": "text", "value": "what colour is it ?"},
    ]
    gateway = Gateway()
    as_video = ModelSpec(name="tiny-video", provider="hf", model=str(folder), video=True)
    with pytest.raises(ModelCallError, match="no_video"):
        gateway.generate(as_video, shown, GenerateParams(max_tokens=2))
    as_frames = ModelSpec(name="tiny-frames", provider="hf", model=str(folder), frames=2)
    one = gateway.generate(as_frames, shown[1:], GenerateParams(max_tokens=2)).tokens_in
    two_frames = gateway.generate(as_frames, shown, GenerateParams(max_tokens=2)).tokens_in
    assert two_frames > one + 2  # two images' tokens in the prompt
