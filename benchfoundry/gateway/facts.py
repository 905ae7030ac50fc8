"""A text model that reads the image's extracted visual facts instead of its pixels (the
tool-using paradigm MM-Vet evaluates as MM-ReAct). Offline, it is the only model that "sees" the
image, and every report names it as what it is: `sees = "facts"`.

`facts/INNER` wraps any text model spec, e.g. `facts/smollm2` or `facts/openai/gpt-4o-mini`.
Each image part becomes the visual context rendered from the run's `visual_facts` table, within
`options.max_chars` of the catalogue entry (default 2000; a small model reads a shorter one faster).

`options.parts` of the entry shows the reader only some parts of the facts (`captions`,
`instances`, `ocr`; default all): readers of different parts are different models, so they make
an offline ensemble whose members disagree. Such a reader says what it sees (`sees = "facts:
objects"`), the prompt names the parts shown, and the parts are part of its model identity
(`parts_of`).

An image with nothing of the reader's parts (no OCR line for a reader of text) is not shown at
all: the reader has nothing to read, and answers as its inner model does without the image.

The entry's `options.device` and `options.dtype` place its inner local model (a CPU with
bfloat16 units runs it in bfloat16 unless `dtype: float32` says otherwise).

The response cache keys a call by the inner model and the text it is shown (`cache_form`): readers
of different parts are shown different text, so they never share an answer about an image they
read, while a call with no image shown (asked without images for multi-modal gain, or nothing of
its parts) is the inner model's own and is answered once for all of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchfoundry.gateway import providers
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelConfigError, ProviderError, permanent
from benchfoundry.gateway.messages import ImagePart, Part, TextPart, cache_form
from benchfoundry.gateway.models import ModelSpec, parse_model
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams, OptionScores
from benchfoundry.storage.visual_context import PARTS, FactsIndex, parts_in_order, parts_label


def parts_of(spec: ModelSpec) -> tuple[str, ...]:
    """The parts of the facts a fact reader reads (`options.parts`, default all), in rendering
    order; `ModelConfigError` names an unknown one."""
    chosen = spec.options.get("parts", PARTS)
    if isinstance(chosen, str):
        chosen = [chosen]
    try:
        return parts_in_order(chosen)
    except (TypeError, ValueError) as exc:
        raise ModelConfigError(f"model '{spec.name}': options.parts: {exc}") from None


class FactReader(providers.Provider):
    sees = "facts"

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        super().__init__(spec, context)
        if not spec.model:
            raise ModelConfigError(
                f"model '{spec.name}': name the text model to wrap (facts/smollm2)"
            )
        self.parts = parts_of(spec)
        self.sees = parts_label(self.parts)
        inner = parse_model(spec.model)
        # Where the inner model runs and in what precision, as the reader's entry says.
        placed = {k: spec.options[k] for k in ("device", "dtype") if k in spec.options}
        if placed:
            inner = inner.model_copy(update={"options": {**inner.options, **placed}})
        self.inner = providers.create(inner, context)
        self._facts: FactsIndex | None = None

    def cache_identity(self) -> dict[str, str]:
        """The inner model's: what answers is the inner model, shown `cache_form`'s text."""
        return self.inner.cache_identity()

    def cache_form(self, parts: Sequence[Part]) -> list[dict[str, str]]:
        """Keyed by the text the inner model reads: each image as the facts of this reader's
        parts under a line that names them, so new facts, other parts or another cap mean a new
        call. A call with no image is the inner model's own call, answered once for all."""
        return cache_form(self._as_text(parts))

    def facts(self) -> FactsIndex:
        if self._facts is None:
            if self.context.run is None:
                raise permanent(
                    "no_facts", "a fact-reading model needs a run folder with visual facts"
                )
            max_chars = int(self.spec.options.get("max_chars", 2000))
            self._facts = FactsIndex.from_run(self.context.run, max_chars, self.parts)
        return self._facts

    def _as_text(self, parts: Sequence[Part]) -> list[Part]:
        out: list[Part] = []
        for part in parts:
            if isinstance(part, ImagePart):
                context = self.facts().context(part.sha256)
                if context is None:
                    raise permanent(
                        "no_facts",
                        f"no visual facts for image {part.sha256[:12]}: run the extract stage first",
                    )
                if context:  # nothing of the reader's parts: there is nothing to show
                    out.append(TextPart(value=f"{self._header()}\n{context}"))
            else:
                out.append(part)
        return out

    def _header(self) -> str:
        if self.parts == PARTS:
            return "[Image described by extracted visual facts]"
        return (
            f"[Image described by extracted visual facts, {self.sees.removeprefix('facts: ')} only]"
        )

    def generate(
        self, parts: Sequence[Part], params: GenerateParams, mcq: MCQ | None
    ) -> Completion:
        return self.inner.generate(self._as_text(parts), params, mcq)

    def score_options(self, parts: Sequence[Part], options: Sequence[str]) -> OptionScores:
        return self.inner.score_options(self._as_text(parts), options)

    def score_options_many(
        self, items: Sequence[tuple[Sequence[Part], Sequence[str]]]
    ) -> list[OptionScores | ProviderError]:
        """The inner model's, on the facts' text: questions about one image share it."""
        shown: list[tuple[Sequence[Part], Sequence[str]] | ProviderError] = []
        for parts, options in items:
            try:
                shown.append((self._as_text(parts), options))
            except ProviderError as exc:
                shown.append(exc)
        asked = self.inner.score_options_many(
            [s for s in shown if not isinstance(s, ProviderError)]
        )
        answers = iter(asked)
        return [s if isinstance(s, ProviderError) else next(answers) for s in shown]
