"""Captions from a local `transformers` image-to-text model given by path or id (BLIP, BLIP-2,
GIT, ...), on the GPU when there is one; a batch of images is captioned by one `generate`."""

from __future__ import annotations

import importlib.metadata
import threading
from typing import Any

from PIL import Image

from benchfoundry.core.records import Caption
from benchfoundry.extractors.base import (
    Captioner,
    ExtractorFailed,
    ExtractorUnavailable,
    default_batch_size,
)

_LOCK = threading.Lock()


class TransformersCaptioner(Captioner):
    name = "hf"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        source = settings.get("model")
        if not source:
            raise ExtractorUnavailable(
                "captioner 'hf' needs a model: set options.extract.captioner_model to a folder or id"
            )
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.source = str(source)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            with _LOCK:
                self.processor = AutoProcessor.from_pretrained(self.source)
                self.net = (
                    AutoModelForImageTextToText.from_pretrained(self.source).to(self.device).eval()
                )
        except (OSError, ValueError) as exc:
            raise ExtractorUnavailable(
                f"captioner 'hf': cannot load {self.source}: {exc}"
            ) from None
        self.max_new_tokens = int(settings.get("max_new_tokens", 30))
        self.prompt = settings.get("prompt")
        self.batch_size = default_batch_size(settings, self.device)

    @property
    def model(self) -> str:
        return self.source

    @property
    def version(self) -> str:
        return importlib.metadata.version("transformers")

    def caption(self, image: Image.Image, context: str | None = None) -> list[Caption]:
        return self.caption_many([image], [context])[0]

    def caption_many(
        self, images: list[Image.Image], contexts: list[str | None] | None = None
    ) -> list[list[Caption]]:
        """One greedy `generate` over the batch (the processor resizes every image to the
        model's size; every prompt is the same, so no row is padded); `contexts` are unused."""
        import torch

        kwargs: dict[str, Any] = {
            "images": [image.convert("RGB") for image in images],
            "return_tensors": "pt",
        }
        if self.prompt:
            kwargs["text"] = [self.prompt] * len(images)
        try:
            with _LOCK, torch.no_grad():
                inputs = self.processor(**kwargs).to(self.device)
                output = self.net.generate(
                    **inputs, max_new_tokens=self.max_new_tokens, do_sample=False
                )
        except (RuntimeError, ValueError) as exc:
            raise ExtractorFailed(f"captioner {self.source}: {type(exc).__name__}: {exc}") from None
        start = (
            inputs["input_ids"].shape[1]
            if "input_ids" in inputs and self.net.config.is_encoder_decoder is False
            else 0
        )
        texts = self.processor.batch_decode(output[:, start:], skip_special_tokens=True)
        return [
            [Caption(text=text.strip(), backend=self.name, model=self.source)]
            if text.strip()
            else []
            for text in texts
        ]
