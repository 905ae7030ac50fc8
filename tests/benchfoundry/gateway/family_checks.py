"""A tiny model of a family (`tiny_families.py`) asked through the real gateway (`hf/<folder>`):
`prove(folder)` returns what it saw as JSON-ready values: generation, option likelihoods
(together, one by one, and as the model's own `generate` scores the same tokens), a question
without an image, two images in one message, and a clip as video. A check that fails with a
typed error records it (`error`); any other exception is a `crash`, with its traceback.

Run as a script (`python family_checks.py FOLDER FAMILY...`) it builds and proves each family
in a folder under FOLDER and prints one JSON line: the families whose processors need
torchvision are proven this way, in the venv that has it.
"""

from __future__ import annotations

import io
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any


def picture(colour: tuple[int, int, int], size: tuple[int, int] = (64, 48)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    image = Image.new("RGB", size, colour)
    image.paste((255, 255, 255), (0, 0, size[0] // 3, size[1] // 3))
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def clip() -> dict[str, Any]:
    """A one-second clip of twelve frames growing brighter, as a message's video part."""
    import numpy as np

    from benchfoundry.core.video import encode_clip

    frames = [np.full((48, 64, 3), 16 * i, np.uint8) for i in range(12)]
    data = encode_clip(frames, fps=12)
    return {
        "type": "video",
        "value": data,
        "start": 0.0,
        "end": 1.0,
        "keyframe": picture((9, 9, 9)),
    }


def _attempt(check: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A check's values, or the typed failure it met (`error`), or any other exception with
    its traceback (`crash`: what a family must never do)."""
    from benchfoundry.gateway import ModelCallError
    from benchfoundry.gateway.errors import ModelConfigError, ProviderError

    try:
        return check()
    except (ModelCallError, ModelConfigError, ProviderError) as exc:
        return {"error": type(exc).__name__, "kind": getattr(exc, "kind", None), "said": str(exc)}
    except Exception as exc:  # noqa: BLE001 (reported, and the test fails on it)
        return {"crash": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}


def generated_scores(provider: Any, parts: list[Any], options: list[str]) -> list[float]:
    """Each option's summed log-likelihood as the model's own `generate` gives it, forced to
    write the option's tokens: the family's own positions, masks and token types, no cache
    tricks of ours. The reference the gateway's scores must match."""
    import torch
    from transformers import LogitsProcessor, LogitsProcessorList

    from benchfoundry.gateway.local_scoring import encode_options
    from benchfoundry.gateway.local_vision import forget_rope_offset

    class Forced(LogitsProcessor):
        def __init__(self, ids: list[int]) -> None:
            self.ids, self.total, self.step = ids, 0.0, 0

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            token = self.ids[self.step]
            self.total += float(torch.log_softmax(scores[0].float(), dim=-1)[token])
            self.step += 1
            forced = torch.full_like(scores, float("-inf"))
            forced[:, token] = 0
            return forced

    model, _, _ = provider.load()
    inputs = provider._inputs(parts, None)
    encoded = encode_options(provider._tokenizer(), inputs["input_ids"][0].tolist(), options)
    totals = []
    for ids in encoded:
        forced = Forced(ids)
        forget_rope_offset(model)
        with torch.no_grad():
            model.generate(
                **inputs,
                max_new_tokens=len(ids),
                do_sample=False,
                logits_processor=LogitsProcessorList([forced]),
            )
        totals.append(forced.total)
    return totals


def prove(folder: Path) -> dict[str, Any]:
    """Ask the model in `folder` through a fresh gateway: see the module's text."""
    from benchfoundry.gateway import Gateway, GenerateParams
    from benchfoundry.gateway.messages import clip_input, normalise
    from benchfoundry.gateway.models import ModelSpec

    gateway = Gateway()
    model = f"hf/{folder}"
    question = {"type": "text", "value": "what colour is it ?"}
    red, blue = picture((200, 0, 0)), picture((0, 0, 200), (40, 60))
    one = [{"type": "image", "value": red}, question]
    two = [{"type": "image", "value": red}, {"type": "image", "value": blue}, question]
    params = GenerateParams(max_tokens=3)
    out: dict[str, Any] = {}

    def generate(messages: list[dict[str, Any]]) -> dict[str, Any]:
        first, again = (gateway.generate(model, messages, params) for _ in range(2))
        return {
            "text": first.text,
            "again": again.text,
            "tokens_in": first.tokens_in,
            "tokens_out": first.tokens_out,
        }

    def likelihood(asked: list[tuple[list[dict[str, Any]], list[str]]]) -> dict[str, Any]:
        provider = gateway.provider(model)
        alone = [gateway.score_options(model, m, o) for m, o in asked]
        together = gateway.score_options_many(model, asked)
        return {
            "alone": [s.summed for s in alone],
            "n_tokens": [s.n_tokens for s in alone],
            "best_alone": [s.best(normalised=True) for s in alone],
            "together": [getattr(s, "summed", repr(s)) for s in together],
            "best_together": [
                getattr(s, "best", lambda **_: None)(normalised=True) for s in together
            ],
            "generated": [generated_scores(provider, normalise(m), o) for m, o in asked],
        }

    out["generate"] = _attempt(lambda: generate(one))
    asked = [
        ([{"type": "image", "value": blue}, question], ["blue", "red green"]),
        (one, ["red", "blue", "green"]),
    ]
    out["likelihood"] = _attempt(lambda: likelihood(asked))
    # No image: the same model still answers from text (a question about a clip's facts).
    # Scored right after an image's question, with an option of two tokens: nothing of the
    # image's prompt (Qwen's RoPE offset) may carry over.
    text_only = [([question], ["red", "blue green"])]
    out["text_only"] = _attempt(lambda: likelihood(text_only) | generate([question]))

    def several() -> dict[str, Any]:
        reply = gateway.generate(model, two, params)
        return {"tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out} | likelihood(
            [(two, ["red", "blue"])]
        )

    out["two_images"] = _attempt(several)
    # A clip as video: a catalogue entry's `video: true`, four frames.
    as_video = ModelSpec(
        name=f"{folder.name}-video", provider="hf", model=str(folder), video=True, frames=4
    )
    shown = [clip(), {"type": "text", "value": "what happens ?"}]

    def watch() -> dict[str, Any]:
        reply = gateway.generate(as_video, shown, params)
        provider = gateway.provider(as_video)
        parts = clip_input(normalise(shown), "pixels", 4, True)
        alone = gateway.score_options(as_video, shown, ["up", "down"])
        together = gateway.score_options_many(as_video, [(shown, ["up", "down"])])[0]
        return {
            "tokens_in": reply.tokens_in,
            "tokens_out": reply.tokens_out,
            "text_only_tokens_in": gateway.generate(as_video, shown[1:], params).tokens_in,
            "alone": alone.summed,
            "together": getattr(together, "summed", repr(together)),
            "generated": generated_scores(provider, parts, ["up", "down"]),
        }

    out["video"] = _attempt(watch)
    return out


def main(root: str, *families: str) -> None:
    """Build and prove each family in a folder under `root`; print one JSON line."""
    from tiny_families import FAMILIES  # beside this script, first on its path

    results = {}
    for family in families:
        folder = Path(root) / family
        built = _attempt(lambda f=family, d=folder: {"folder": str(FAMILIES[f](d))})
        results[family] = built if "folder" not in built else prove(folder)
        results[family]["folder"] = str(folder)
    print(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:])
