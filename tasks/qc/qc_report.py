"""The quality-control report: markdown (file and Prefect artifact), a closing text for the
terminal, and one plot file with the hit histograms, difficulty per dimension, selected versus
available per dimension and the answer letters of the selection."""

from __future__ import annotations

from pathlib import Path

from benchfoundry.tasks.qc.summary import AskSummary, ModelHits, SelectSummary

from benchfoundry.core.letters import LETTERS


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _model_rows(models: list[ModelHits]) -> list[str]:
    rows = [
        "| model | sees | role | counted | questions | right (first pass) | right (circular) "
        "| calls | calls if every pass | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in models:
        errors = ", ".join(f"{k} {n}" for k, n in m.errors.items()) or "-"
        rows.append(
            f"| {m.model} | {m.sees} | {m.role} | {'yes' if m.counted else 'no'} | {m.questions} "
            f"| {_pct(m.vanilla_accuracy)} | {_pct(m.circular_accuracy)} | {m.calls_made} | {m.calls_if_every_pass} "
            f"| {errors} |"
        )
    return rows


def ask_markdown(summary: AskSummary) -> list[str]:
    what = (
        "Text-only ensemble, asked without the image"
        if summary.step == "filter"
        else "Vision-language ensemble, asked with the image"
    )
    return [
        f"## {summary.step}: {what}",
        "",
        f"{summary.candidates} candidates ({summary.skipped_refused} refused at generation were "
        f"not asked); {summary.calls_made} calls where asking every pass would take "
        f"{summary.calls_if_every_pass}; {summary.calls_cached} answered from the cache; "
        f"{summary.seconds:.1f} s.",
        "",
        *_model_rows(summary.models),
        "",
    ]


def select_markdown(summary: SelectSummary) -> list[str]:
    lines = [
        "## select: decisions",
        "",
        *[f"- **Note:** {w}" for w in summary.warnings],
        *([""] if summary.warnings else []),
        f"{summary.candidates} candidates; text-only models counted: "
        f"{', '.join(summary.text_models) or 'none'}; vision-language models: "
        f"{', '.join(summary.vlm_models) or 'none'}.",
        "",
        "| decision | candidates |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in summary.decisions.items()],
        "",
        "| decision:reason | candidates |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in summary.reasons.items()],
        "",
        "Baselines without the image (share right on the first pass; `longest` and `similar` "
        "measure leakage in the options, the others the chance floor): "
        + (", ".join(f"{k} {_pct(v)}" for k, v in summary.blind_hit_rates.items()) or "none"),
        "",
        "| dimension | candidates | eligible | target | selected | shortfall | held back | letters "
        "| difficulty of the selection |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in summary.dimensions:
        held = ", ".join(f"{k} {n}" for k, n in d.held_back.items()) or "-"
        letters = ", ".join(f"{k} {n}" for k, n in d.letters.items()) or "-"
        difficulty = ", ".join(f"{k} {n}" for k, n in d.difficulty.items()) or "-"
        lines.append(
            f"| {d.dimension} | {d.candidates} | {d.eligible} | {d.target} | {d.selected} "
            f"| {d.shortfall} | {held} | {letters} | {difficulty} |"
        )
    lines += [
        "",
        f"Selected {summary.selected}; answer letters "
        + (", ".join(f"{k} {n}" for k, n in summary.letters_selected.items()) or "-")
        + f"; LLM hit rate of the selection (hit by more than half the text-only models): "
        f"{_pct(summary.llm_hit_rate_selected)}; each text-only LLM right on the selection "
        "without the image: "
        + (", ".join(f"{k} {_pct(v)}" for k, v in summary.text_accuracy_selected.items()) or "-")
        + ".",
        "",
        "Text-only hits per candidate: "
        + ", ".join(f"{k}: {n}" for k, n in summary.text_hit_histogram.items()),
        "",
        "Vision-language hits per candidate: "
        + ", ".join(f"{k}: {n}" for k, n in summary.vlm_hit_histogram.items()),
        "",
        "### Examples",
        "",
    ]
    for ex in summary.examples:
        options = "; ".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(ex.options))
        lines.append(
            f"- **{ex.decision}** [{ex.dimension}] {ex.question} ({options}; answer {ex.answer}) "
            f"— {ex.reason}"
        )
    return lines + [""]


def qc_markdown(
    filter_summary: AskSummary | None,
    consensus_summary: AskSummary | None,
    select_summary: SelectSummary | None,
) -> str:
    lines = ["# Quality control", ""]
    for ask in (filter_summary, consensus_summary):
        if ask is not None:
            lines += ask_markdown(ask)
    if select_summary is not None:
        lines += select_markdown(select_summary)
        if select_summary.plot:
            lines += [f"Plots: `{select_summary.plot}`", ""]
    return "\n".join(lines)


def qc_text(
    filter_summary: AskSummary | None,
    consensus_summary: AskSummary | None,
    select_summary: SelectSummary | None,
) -> list[str]:
    """Lines for the closing report in a terminal."""
    out: list[str] = []
    for ask in (filter_summary, consensus_summary):
        if ask is None:
            continue
        title = "Filter (text-only, no image)" if ask.step == "filter" else "Consensus (with image)"
        out += [
            "",
            f"{title}: {ask.candidates} candidates, {ask.calls_made} calls "
            f"(every pass would be {ask.calls_if_every_pass}; {ask.calls_cached} from the cache)",
        ]
        for m in ask.models:
            tag = "" if m.counted else ", reported only"
            errors = f", errors {sum(m.errors.values())}" if m.errors else ""
            out.append(
                f"  {m.model:<16} sees {m.sees:<7} {m.role}{tag}: right {_pct(m.vanilla_accuracy)} first pass, "
                f"{_pct(m.circular_accuracy)} circular{errors}"
            )
    s = select_summary
    if s is None:
        return out
    out += [
        "",
        "Select: " + ", ".join(f"{k} {v}" for k, v in s.decisions.items()),
        "  reasons: " + ", ".join(f"{k} {v}" for k, v in s.reasons.items()),
    ]
    for d in s.dimensions:
        short = f", short by {d.shortfall}" if d.shortfall else ""
        out.append(
            f"  {d.dimension:<22} selected {d.selected:>4} of target {d.target} "
            f"({d.eligible} eligible of {d.candidates}){short}"
        )
    out.append(
        "  answer letters of the selection: "
        + (", ".join(f"{k} {n}" for k, n in s.letters_selected.items()) or "-")
        + f"; LLM hit rate {_pct(s.llm_hit_rate_selected)}"
        + "".join(
            f"; {k} right without the image {_pct(v)}" for k, v in s.text_accuracy_selected.items()
        )
    )
    out += [f"  note: {w}" for w in s.warnings]
    if s.report:
        out.append(f"  report: {s.report}")
    if s.plot:
        out.append(f"  plots:  {s.plot}")
    return out


def plot(summary: SelectSummary, path: Path) -> Path:
    """Six panels in one PNG; written atomically next to the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(16, 9))
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
    ax.set_title(f"Decisions (LLM hit rate of the selection {_pct(summary.llm_hit_rate_selected)})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png", dpi=80)
    plt.close(fig)
    tmp.replace(path)
    return path
