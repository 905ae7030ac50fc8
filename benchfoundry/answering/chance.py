"""What guessing scores: computed from the option counts (and, for a constant letter, the answer
key), under vanilla evaluation and under CircularEval.

Uniform random guessing gets an N-option question right with probability 1/N, and under
CircularEval (N passes, every one right) with probability (1/N)^N. Always answering one letter
is right on the questions whose key is that letter; under CircularEval never (for N >= 2), since
the key moves to every letter once."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from benchfoundry.answering.engine import AnsweringEngine, EngineReport, MCQItem
from benchfoundry.core.letters import LETTERS
from benchfoundry.gateway import Gateway


class ChanceReport(BaseModel):
    questions: int
    random_vanilla: float
    random_circular: float
    constant_vanilla: dict[str, float]
    constant_circular: dict[str, float]


def analytic_chance(
    option_counts: Sequence[int], answers: Sequence[str] | None = None
) -> ChanceReport:
    """Expected accuracy of random and constant-letter guessing over these questions."""
    n = len(option_counts)
    if n == 0:
        raise ValueError("no questions")
    if any(count < 1 for count in option_counts):
        raise ValueError("every question needs at least one option")
    letters = LETTERS[: max(option_counts)]
    if answers is not None:
        if len(answers) != n:
            raise ValueError("one answer per question")
        constant = {L: sum(a == L for a in answers) / n for L in letters}
    else:  # the key is uniform over each question's letters
        constant = {
            L: sum(1 / c for c in option_counts if LETTERS.index(L) < c) / n for L in letters
        }
    return ChanceReport(
        questions=n,
        random_vanilla=sum(1 / c for c in option_counts) / n,
        random_circular=sum((1 / c) ** c for c in option_counts) / n,
        constant_vanilla=constant,
        constant_circular={L: sum(c == 1 for c in option_counts) / n for L in letters},
    )


BLIND_BASELINES = (
    "blind/random",
    "blind/letter-A",
    "blind/frequent",
    "blind/longest",
    "blind/similar",
)


def empirical_chance(
    gateway: Gateway, items: Sequence[MCQItem], baselines: Sequence[str] = BLIND_BASELINES
) -> dict[str, EngineReport]:
    """Run the blind baselines over the questions (vanilla and circular) and return their reports;
    `blind/frequent` is first shown the answer letters of these questions."""
    engine = AnsweringEngine(gateway, with_image=False)
    reports = {}
    for model in baselines:
        gateway.prepare(model, [item.answer for item in items])
        reports[model] = engine.run(items, model, circular=True)[1]
    return reports
