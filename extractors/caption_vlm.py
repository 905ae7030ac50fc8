"""Captions from a vision-language model through the model gateway (any OpenAI-compatible
server, or a local `hf/...` VLM): cached, rate-limited and retried like every model call."""

from __future__ import annotations

from io import BytesIO
from typing import Any

from PIL import Image

from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, ModelConfigError
from benchfoundry.records import Caption
from extractors.base import Captioner, ExtractorFailed, ExtractorUnavailable

PROMPT = "Describe this image in one factual sentence: the main objects, their colours and where they are."


class GatewayCaptioner(Captioner):
    name = "vlm"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.model_spec = settings.get("model")
        if not self.model_spec:
            raise ExtractorUnavailable(
                "captioner 'vlm' needs a model: set options.extract.captioner_model (e.g. openai/gpt-4o-mini)"
            )
        self.gateway: Gateway = settings.get("gateway") or Gateway()  # the stage passes the run's
        try:
            self.gateway.provider(
                self.model_spec
            )  # a bad name or spec fails here, before any image
        except (ModelConfigError, ValueError) as exc:
            raise ExtractorUnavailable(f"captioner 'vlm': {exc}") from None
        self.params = GenerateParams(max_tokens=int(settings.get("max_tokens", 60)))

    @property
    def model(self) -> str:
        return str(self.model_spec)

    def caption(self, image: Image.Image, context: str | None = None) -> list[Caption]:
        buffer = BytesIO()
        image.convert("RGB").save(buffer, format="PNG")
        try:
            reply = self.gateway.generate(
                self.model_spec,
                [{"type": "image", "value": buffer.getvalue()}, {"type": "text", "value": PROMPT}],
                self.params,
            )
        except ModelCallError as exc:
            raise ExtractorFailed(str(exc)) from None
        text = reply.text.strip()
        return [Caption(text=text, backend=self.name, model=str(self.model_spec))] if text else []
