"""The report's plots: vanilla against CircularEval per model, per-category accuracy as a
heatmap (models by score, values and intervals in the cells, in-build models marked), accuracy by difficulty bin; on open-ended sets, MM-Vet's scores per capability with
their spread over the gradings. PNG bytes by file name."""

from __future__ import annotations

import io
from collections.abc import Sequence

from benchfoundry.tasks.evaluate.summary import (
    EvaluateSummary,
    ModelScore,
    OpenScore,
    _label,
    capabilities,
)


def _subplots(**figure):
    """A figure of its own and its one axes (no pyplot: no global figure state, and a fifth of
    a second less import in every command that plots)."""
    from matplotlib.figure import Figure

    fig = Figure(**figure)
    return fig, fig.subplots()


def plots(summaries: Sequence[EvaluateSummary]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}

    def save(name: str, fig) -> None:
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png", metadata={"Software": None})
        out[name] = buffer.getvalue()

    opened: list[OpenScore] = [o for s in summaries for o in s.open_scores]
    if opened:
        save("capabilities.png", capability_plot(summaries, opened))
    scores: list[tuple[EvaluateSummary, ModelScore]] = [(s, m) for s in summaries for m in s.scores]
    if not scores:
        return out
    labels = [_label(m) for _, m in scores]
    # vanilla against CircularEval, per model
    fig, ax = _subplots(figsize=(8, 0.4 * len(scores) + 1.5), dpi=100)
    ys = range(len(scores))
    ax.barh([y - 0.2 for y in ys], [m.vanilla.accuracy for _, m in scores], 0.4, label="vanilla")
    ax.barh(
        [y + 0.2 for y in ys],
        [m.circular.accuracy if m.circular else 0 for _, m in scores],
        0.4,
        label="CircularEval",
    )
    for s in summaries:
        if s.chance_vanilla is not None:
            ax.axvline(s.chance_vanilla, color="grey", linestyle=":", label="chance (vanilla)")
    ax.set_yticks(list(ys), labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy")
    ax.legend(loc="lower right", fontsize=8)
    save("vanilla_vs_circular.png", fig)
    # per category: a heatmap of the values, models ordered by score
    if any(m.by_category for _, m in scores):
        save("per_category.png", category_heatmap(scores))
    # by difficulty bin
    bins = [
        b
        for b in ("tough", "hard", "medium", "easy")
        if any(b in m.by_difficulty for _, m in scores)
    ]
    if bins:
        fig, ax = _subplots(figsize=(7, 3.5), dpi=100)
        for i, (_, m) in enumerate(scores):
            ax.plot(
                bins,
                [
                    m.by_difficulty[b]["vanilla"].accuracy if b in m.by_difficulty else None
                    for b in bins
                ],
                marker="o",
                label=labels[i],
            )
        ax.set_ylim(0, 1)
        ax.set_ylabel("vanilla accuracy")
        ax.set_xlabel("difficulty bin (quality control)")
        ax.legend(fontsize=7)
        save("by_difficulty.png", fig)
    return out


def _short(label: str, most: int = 56) -> str:
    """A row label of at most `most` characters (an endpoint URL cut in its middle)."""
    if len(label) <= most:
        return label
    keep = (most - 1) // 2
    return f"{label[:keep]}…{label[-keep:]}"


def category_heatmap(scores: Sequence[tuple[EvaluateSummary, ModelScore]]):
    """Models as rows (best first), categories as columns, each cell the accuracy under the
    board's metric (CircularEval where the evaluation asked it, else vanilla) and its 95%
    interval; models that took part in building the release marked *. Rows are in the board's
    order. Readable at a dozen models and twenty categories, where grouped bars are not."""
    import numpy as np

    circular = all(s.mode == "circular" and m.circular for s, m in scores)
    metric = "circular" if circular else "vanilla"
    categories = sorted({c for _, m in scores for c in m.by_category})
    ranked = sorted(
        scores, key=lambda sm: -(sm[1].circular if circular else sm[1].vanilla).accuracy
    )
    values = np.full((len(ranked), len(categories)), np.nan)
    for i, (_, m) in enumerate(ranked):
        for j, c in enumerate(categories):
            if (v := m.by_category.get(c, {}).get(metric)) is not None:
                values[i, j] = v.accuracy
    names = [_short(f"{_label(m)}{' *' if m.in_build else ''}") for _, m in ranked]
    longest = max(len(n) for n in names) + 2  # the row labels' room, in characters
    fig, ax = _subplots(
        figsize=(1.5 + 0.09 * longest + 0.8 * len(categories), 1.8 + 0.42 * len(ranked)),
        dpi=100,
    )
    ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    for i, (_, m) in enumerate(ranked):
        for j, c in enumerate(categories):
            v = m.by_category.get(c, {}).get(metric)
            if v is None:
                continue
            ax.text(
                j, i, f"{v.accuracy:.2f}\n{v.interval[0]:.2f}–{v.interval[1]:.2f}", ha="center", va="center",
                fontsize=6.5,
                color="black" if v.accuracy > 0.6 else "white",
            )  # fmt: skip
    ax.set_yticks(range(len(ranked)), names, fontsize=8)
    ax.set_xticks(range(len(categories)), categories, rotation=35, ha="right", fontsize=8)
    ax.set_title(
        f"{'CircularEval' if circular else 'vanilla'} accuracy per category, its 95% interval "
        "below it\nmodels by overall accuracy, as on the board"
        + ("; * took part in building the release" if any(m.in_build for _, m in ranked) else ""),
        fontsize=9,
        loc="left",
    )
    return fig


def capability_plot(summaries: Sequence[EvaluateSummary], opened: Sequence[OpenScore]):
    """MM-Vet's scores per capability and in total, bars with the spread over the gradings."""
    names = sorted({c for s in summaries for c in capabilities(s)}) + ["total"]
    fig, ax = _subplots(figsize=(9, 4), dpi=100)
    width = 0.8 / max(1, len(opened))
    for i, o in enumerate(opened):
        spreads = [o.total if c == "total" else o.by_capability.get(c) for c in names]
        xs = [j + i * width for j in range(len(names))]
        ax.bar(
            xs,
            [x.mean if x else 0 for x in spreads],
            width,
            yerr=[x.std if x else 0 for x in spreads],
            capsize=2,
            label=_label(o),
        )
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(names))], names)
    ax.set_ylim(0, 1)
    ax.set_ylabel("MM-Vet score (mean ± std over gradings)")
    ax.legend(fontsize=7)
    return fig
