"""What an evaluation reports on an open-ended set (MM-Vet): per model the total score and the
scores per capability and per capability integration, each the mean and standard deviation over
the k gradings, and the gradings that failed; rendered as the open-ended set's board. Also the
label every board gives a score (the model, and what it sees)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from benchfoundry.tasks.evaluate.summary import EvaluateSummary, ModelScore


class Spread(BaseModel):
    """A score over k grading runs (MM-Vet): the mean of the runs' scores (each the mean grade,
    in [0, 1], over the questions graded in that run) and their standard deviation (over the
    runs, population form as MM-Vet reports it)."""

    mean: float
    std: float
    questions: int
    runs: list[float]


class GradingFailure(BaseModel):
    question_id: str
    source_id: str  # the dataset's own id
    grading: int
    reply: str | None  # the grader's last reply, raw
    why: str


class OpenScore(BaseModel):
    """One model on an open-ended set."""

    model: str
    sees: str
    with_image: bool
    run_id: str
    questions: int  # answered, with at least one grade
    unanswered: int  # the answer or a grading call failed: asked again on the next run
    gradings: int  # k
    total: Spread
    by_capability: dict[str, Spread]  # the dataset's own names: rec, ocr, know, gen, spat, math
    by_integration: dict[str, Spread]  # the exact capability set: ocr_spat...
    grading_failures: int
    failures: list[GradingFailure]  # the first 50, with the raw replies
    asked_now: int
    reused: int
    answer_calls: int
    grading_calls: int
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


def score_label(s: ModelScore | OpenScore) -> str:
    """A score's model as the boards show it, with what it sees."""
    sees = {"pixels": "sees the image", "facts": "reads extracted facts", "nothing": "blind"}
    shown = sees.get(s.sees, s.sees) if s.with_image else "no image"
    return f"{s.model} ({shown})"


def spread(x: Spread | None) -> str:
    """An MM-Vet score as it is reported: mean ± standard deviation over the gradings."""
    return "-" if x is None else f"{x.mean:.1%} ± {100 * x.std:.1f}"


def capabilities(summary: EvaluateSummary) -> list[str]:
    """The open-ended set's capabilities, as the dataset names them."""
    return sorted({c for s in summary.open_scores for c in s.by_capability})


def open_board(summary: EvaluateSummary) -> list[list[str]]:
    """Rows of an open-ended set's board, best total first: model, total, each capability,
    grading failures, calls."""
    names = capabilities(summary)
    return [
        [
            score_label(s),
            spread(s.total),
            *(spread(s.by_capability.get(c)) for c in names),
            str(s.grading_failures),
            f"{s.answer_calls} + {s.grading_calls}",
        ]
        for s in sorted(summary.open_scores, key=lambda s: s.total.mean, reverse=True)
    ]


def open_markdown(summary: EvaluateSummary) -> list[str]:
    names = capabilities(summary)
    header = ["model", "total", *names, "grading failures", "calls (answers + gradings)"]
    lines = [
        f"Graded by {summary.grader}, {summary.open_scores[0].gradings if summary.open_scores else 0} "
        "times per answer; each score is the mean over the gradings ± their standard deviation "
        "(points of 100).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in open_board(summary)),
    ]
    integrations = sorted({c for s in summary.open_scores for c in s.by_integration})
    if integrations:
        lines += ["", "| model | " + " | ".join(integrations) + " |"]
        lines.append("|" + "---|" * (len(integrations) + 1))
        for s in summary.open_scores:
            cells = [spread(s.by_integration.get(c)) for c in integrations]
            lines.append(f"| {score_label(s)} | " + " | ".join(cells) + " |")
    for s in summary.open_scores:
        for f in s.failures:
            lines.append(
                f"- {s.model}: grading {f.grading} of {f.source_id} failed ({f.why}); "
                f"last reply {f.reply!r}"
            )
    return lines
