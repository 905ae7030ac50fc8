"""The leaderboard's columns: their headers (the score column named for what the board
holds) and a legend that says once what each means, for the Markdown board and the HTML page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchfoundry.tasks.evaluate.leaderboard import BoardRow

HEADER = [
    "dataset",
    "model",
    "questions",
    "failed",
    "refused",
    "vanilla [95% CI] (MM-Vet: score ± std)",
    "CircularEval [95% CI]",
    "circular drop",
    "MG",
    "ML",
    "rank range",
    "in build",
]
# Which interval every accuracy of a board shows, said in each output's legend.
INTERVAL = (
    "a 95% interval: Wilson's score interval; where questions share images, the cluster-robust "
    "(sandwich) interval with the image as the cluster, widened on either side to Wilson's "
    "where it is narrower, so that 0 or N of N is never a zero-width interval"
)
# How the paired differences' intervals (models compared, a model's languages) are made.
PAIRED_INTERVAL = (
    "a paired difference's 95% interval is the percentile bootstrap resampling whole images "
    "(2,000 resamples), widened where narrower to Agresti and Min's interval (half a count "
    "added to each cell), so that a difference where every item went one way is not zero-width"
)
# What each column means, once, under the board (Markdown and HTML).
LEGEND = {
    "questions": "every question of the set: the denominator of each accuracy, failed calls "
    "included",
    "failed": "questions whose call failed after retries, or that the model was not asked "
    "(stopped, interrupted), by reason: scored wrong, asked again by the next run",
    "vanilla": f"accuracy with the options asked once, as written, with {INTERVAL}; on an "
    "open-ended (MM-Vet) set, the judge's mean score ± its standard deviation over the gradings",
    "CircularEval": "accuracy when a question counts only if every rotation of its options "
    "is answered right (MMBench), with the same interval; - when not asked",
    "refused": "share of first answers that named no option (Z): scored wrong",
    "circular drop": "vanilla minus CircularEval: answers that depended on where the right "
    "option stood",
    "MG": "multi-modal gain (MMStar): the model's accuracy with the image minus without it",
    "ML": "multi-modal leakage (MMStar): how much more the model gets right without the image "
    "than its base LLM does, max(0, S_wv - S_t) (evidence the questions leaked into its "
    "multi-modal training); - without --base-llm",
    "rank range": "the ranks the model could hold among the models of its own board, given "
    "which paired differences are significant (exact McNemar, Holm-adjusted): models asked "
    "with the image, those asked without it, and each language of a bilingual release are "
    "ranked apart",
    "in build": "the roles the model (or its family) had in building the release; the "
    "sentences below say which way each biases its score",
}


def header(rows: Sequence[BoardRow]) -> list[str]:
    """The board's header: the score column named for what the rows hold."""
    metrics = {r.metric for r in rows}
    score = (
        "MM-Vet score ± std"
        if metrics == {"mm-vet"}
        else "vanilla [95% CI]"
        if "mm-vet" not in metrics
        else HEADER[5]
    )
    return [*HEADER[:5], score, *HEADER[6:]]


def legend(rows: Sequence[BoardRow]) -> list[str]:
    """One line per column worth explaining, for the columns this board shows."""
    circular = any(r.circular is not None for r in rows)
    gains = any(r.mg is not None or r.ml is not None for r in rows)
    return [
        f"{name}: {text}"
        for name, text in LEGEND.items()
        if (circular or name not in ("CircularEval", "circular drop"))
        and (gains or name not in ("MG", "ML"))
    ]


def interval_legend(paired: bool) -> list[str]:
    """The text and Markdown summaries' legend: which interval each accuracy shows, and (where
    paired differences are shown) how theirs are made."""
    out = [f"Intervals: every accuracy [in brackets] is {INTERVAL}."]
    if paired:
        out.append(
            "Paired differences (models compared, a model's loss from English to another "
            f"language): {PAIRED_INTERVAL}."
        )
    return out
