"""The quality-control report: markdown (file and Prefect artifact), a closing text for the
terminal, and one plot file with the hit histograms, difficulty per dimension, selected versus
available per dimension and the answer letters of the selection."""

from __future__ import annotations

from pathlib import Path

from benchfoundry.tasks.qc.summary import AskSummary, SelectSummary, pct


def qc_markdown(
    filter_summary: AskSummary | None,
    consensus_summary: AskSummary | None,
    select_summary: SelectSummary | None,
) -> str:
    lines = ["# Quality control", ""]
    for ask in (filter_summary, consensus_summary):
        if ask is not None:
            lines += ask.markdown_lines()
    if select_summary is not None:
        lines += select_summary.markdown_lines()
        if select_summary.plot:
            lines += [f"Plots: `{select_summary.plot}`", ""]
    return "\n".join(lines)


def plot(summary: SelectSummary, path: Path) -> Path:
    """Six panels in one PNG; written atomically next to the report. A `Figure` of its own
    (no pyplot: no global figure state between threads, and a fifth of a second less import)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(16, 9))
    axes = fig.subplots(2, 3)
    panels = [
        (axes[0, 0], summary.text_hit_histogram, "Text-only hits per candidate", "hits"),
        (axes[0, 1], summary.vlm_hit_histogram, "Vision-language hits per candidate", "hits"),
        (axes[1, 2], summary.letters_selected, "Answer letters of the selection", "letter"),
    ]
    for ax, counts, title, xlabel in panels:
        ax.bar(list(counts), list(counts.values()), color="#4c72b0")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("candidates")
    dims = [d.dimension for d in summary.dimensions]
    ax = axes[0, 2]
    x = range(len(dims))
    ax.bar([i - 0.2 for i in x], [d.eligible for d in summary.dimensions], 0.4, label="eligible")
    ax.bar([i + 0.2 for i in x], [d.selected for d in summary.dimensions], 0.4, label="selected")
    ax.plot(list(x), [d.target for d in summary.dimensions], "k_", markersize=20, label="target")
    ax.set_xticks(list(x), dims, rotation=30, ha="right")
    ax.set_title("Selected versus available per dimension")
    ax.legend()
    ax = axes[1, 0]
    present = {b for v in summary.difficulty_by_dimension.values() for b in v}
    bins = [b for b in summary.difficulty_bins if b in present]
    bottom = [0] * len(summary.difficulty_by_dimension)
    names = list(summary.difficulty_by_dimension)
    for b in bins:
        values = [summary.difficulty_by_dimension[n].get(b, 0) for n in names]
        ax.bar(names, values, bottom=bottom, label=b)
        bottom = [p + v for p, v in zip(bottom, values, strict=True)]
    ax.set_title("Difficulty per dimension (all assessed)")
    ax.tick_params(axis="x", rotation=30)
    if bins:
        ax.legend()
    ax = axes[1, 1]
    decisions = summary.decisions
    ax.barh(list(decisions), list(decisions.values()), color="#55a868")
    ax.set_title(f"Decisions (LLM hit rate of the selection {pct(summary.llm_hit_rate_selected)})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png", dpi=80)
    tmp.replace(path)
    return path


def qc_text(
    filter_summary: AskSummary | None,
    consensus_summary: AskSummary | None,
    select_summary: SelectSummary | None,
) -> list[str]:
    """Lines for the closing report in a terminal."""
    return [
        line
        for summary in (filter_summary, consensus_summary, select_summary)
        if summary is not None
        for line in summary.lines()
    ]
