"""Captions from a vision-language model through the model gateway (any OpenAI-compatible
server, or a local `hf/...` VLM): cached, rate-limited and retried like every model call."""

from __future__ import annotations

from io import BytesIO
from typing import Any

from PIL import Image

from benchfoundry.core.records import Caption
from benchfoundry.extractors.base import Captioner, ExtractorFailed, ExtractorUnavailable
from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, ModelConfigError
from benchfoundry.prompts import load


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
        self.template = load("caption")  # prompts/caption.j2; its id goes on every caption
        self.params = GenerateParams(
            max_tokens=int(settings.get("max_tokens", 60)), prompt_version=self.template.prompt_id
        )

    @property
    def model(self) -> str:
        return str(self.model_spec)

    @property
    def version(self) -> str:
        """The prompt's hash: a new prompt is a new configuration (facts are extracted again)."""
        return self.template.version

    def caption(self, image: Image.Image, context: str | None = None) -> list[Caption]:
        buffer = BytesIO()
        image.convert("RGB").save(buffer, format="PNG")
        try:
            reply = self.gateway.generate(
                self.model_spec,
                [
                    {"type": "image", "value": buffer.getvalue()},
                    {"type": "text", "value": self.template.render()},
                ],
                self.params,
            )
        except ModelCallError as exc:
            raise ExtractorFailed(str(exc)) from None
        text = reply.text.strip()
        if not text:
            return []
        return [
            Caption(
                text=text,
                backend=self.name,
                model=str(self.model_spec),
                prompt_id=self.template.prompt_id,
                prompt_hash=self.template.version,
            )
        ]
