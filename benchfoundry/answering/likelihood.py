"""Answer ranking by likelihood (SEED-Bench): the option the model finds most likely after the
question (and image). Summed log-likelihood favours short options; length-normalised (per token)
corrects for that. Every result says which scoring chose it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchfoundry.answering.engine import MCQItem, item_messages
from benchfoundry.core.letters import LETTERS
from benchfoundry.gateway import Gateway, OptionScores
from benchfoundry.prompts import load_for


@dataclass(frozen=True)
class RankedAnswer:
    question_id: str
    model: str
    scoring: str  # "summed" or "normalised"
    chosen: str
    correct: bool
    scores: OptionScores
    prompt_id: str


def rank_by_likelihood(
    gateway: Gateway,
    items: Sequence[MCQItem],
    model: str,
    normalised: bool = True,
    with_image: bool = True,
) -> list[RankedAnswer]:
    """Choose, for each question, the option with the highest likelihood."""
    ranked = []
    for item in items:
        template = load_for("likelihood", item.language)
        prompt = template.render(hint=item.hint, question=item.question)
        messages = item_messages(item, prompt, with_image)
        scores = gateway.score_options(model, messages, item.options)
        chosen = LETTERS[scores.best(normalised=normalised)]
        ranked.append(
            RankedAnswer(
                item.question_id,
                model,
                "normalised" if normalised else "summed",
                chosen,
                chosen == item.answer,
                scores,
                template.prompt_id,
            )
        )
    return ranked
