"""Run summaries as typed records, rendered as markdown (Prefect artifacts) and plain text (CLI)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field, SerializeAsAny

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import CandidateRecord, QuarantineRecord, ScoredRecord
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.summary import SelectSummary


class IngestSummary(BaseModel):
    """What one ingest run did, in counts a person can check."""

    run: str
    sources: list[str]
    images_read: int
    images_decoded: int
    images_added: int
    images_already_stored: int
    exact_duplicates: int
    near_duplicates: int
    seed_questions_read: int
    candidates_added: int
    candidates_already_stored: int
    quarantined_by_reason: dict[str, int]
    quarantine_added: int
    tables: dict[str, str]
    warnings: list[str] = Field(default_factory=list)


class ExtractSummary(BaseModel):
    run: str
    config_hash: str
    extractors: list[dict[str, str | None]]
    images_total: int
    images_already_done: int
    images_extracted: int
    quarantined_by_reason: dict[str, int]
    mean_instances: float
    mean_ocr_lines: float
    mean_captions: float
    seconds_by_backend: dict[str, float]
    seconds_total: float
    example_image: str | None
    example_context: str | None
    processes: int = 1  # distinct processes that extracted batches (Dask workers, or this one)
    in_flow_process: bool = True  # whether any batch ran in the flow's own process


class GenerateSummary(BaseModel):
    run: str
    taxonomy: str
    images: int
    drafts: int
    candidates: int
    candidates_added: int
    refused_by_reason: dict[str, int]
    by_generator: dict[str, int]
    per_dimension: dict[str, dict[str, int]]
    letter_distribution: dict[str, int]
    flagged_length_outliers: int
    cost: float
    seeds_refused_by_reason: dict[str, int] = {}
    cost_by_dimension: dict[str, float] = {}
    letters_by_option_count: dict[str, dict[str, int]] = {}


def generate_markdown(summary: GenerateSummary) -> str:
    lines = [
        f"# Generate ({summary.taxonomy})",
        "",
        f"{summary.drafts} drafts from {summary.images} images, "
        f"{summary.candidates} candidates ({summary.candidates_added} new), cost {summary.cost:.4f}",
        "",
        "| dimension | counts |",
        "|---|---|",
    ]
    lines += [
        f"| {d} | " + ", ".join(f"{k} {v}" for k, v in c.items()) + " |"
        for d, c in summary.per_dimension.items()
    ]
    by_count = "; ".join(
        f"{n} options: " + ", ".join(f"{k} {v}" for k, v in d.items())
        for n, d in summary.letters_by_option_count.items()
    )
    costs = (
        ", ".join(f"{k} {v:.4f}" for k, v in summary.cost_by_dimension.items() if v) or "nothing"
    )
    lines += [
        "",
        "Answer letters: " + ", ".join(f"{k} {v}" for k, v in summary.letter_distribution.items()),
        f"Answer letters by option count: {by_count}",
        f"Cost by dimension: {costs}",
        "Refused: "
        + (", ".join(f"`{k}` {v}" for k, v in summary.refused_by_reason.items()) or "nothing"),
        "By generator: " + ", ".join(f"{k} {v}" for k, v in summary.by_generator.items()),
    ]
    return "\n".join(lines) + "\n"


class Example(BaseModel):
    question_id: str
    dimension: str
    question: str
    options: list[str]
    answer: str
    source: str


class BuildSummary(BaseModel):
    """The outcome of a build: each stage's summary, by stage name in the order they ran, and
    the state of the run folder."""

    spec: str
    run: str
    stages: list[str]
    summaries: dict[str, SerializeAsAny[BaseModel]] = {}
    table_rows: dict[str, int]
    quarantine_by_stage_reason: dict[str, dict[str, int]]
    quarantine_examples: dict[str, dict[str, str]]
    examples: list[Example]
    manifest: str
    decisions: dict[str, int] = {}

    def of(self, stage: str) -> Any:
        """One stage's summary (None when the build did not run it)."""
        return self.summaries.get(stage)


class RunState(BaseModel):
    """What a run folder holds now."""

    table_rows: dict[str, int]
    decisions: dict[str, int] = {}  # quality control's decisions, when `scored` exists
    quarantine_by_stage_reason: dict[str, dict[str, int]]
    quarantine_examples: dict[str, dict[str, str]]
    examples: list[Example]


def run_state(run: RunFolder, n_examples: int = 3) -> RunState:
    """Rows per table, quarantine counts by stage and reason with the first case of each, and a
    few example questions (one per dimension first)."""
    by_stage: dict[str, dict[str, int]] = {}
    first: dict[str, dict[str, str]] = {}
    quarantine = run.table(QuarantineRecord).read(columns=["stage", "reason", "source", "detail"])
    for row in quarantine.sort_by([("stage", "ascending"), ("source", "ascending")]).to_pylist():
        reasons = by_stage.setdefault(row["stage"], {})
        reasons[row["reason"]] = reasons.get(row["reason"], 0) + 1
        name = row["source"].rsplit("/", 1)[-1]
        first.setdefault(row["stage"], {}).setdefault(row["reason"], f"{name}: {row['detail']}")
    columns = ["question_id", "dimension", "question", "options", "answer", "source"]
    rows = run.table(CandidateRecord).read(columns=columns).sort_by("question_id").to_pylist()
    scored = run.table(ScoredRecord).read(columns=["question_id", "decision", "rank"]).to_pylist()
    rank = {r["question_id"]: r["rank"] for r in scored if r["decision"] == "selected"}
    decisions = Counter(r["decision"] for r in scored)
    if rank:  # after selection, show selected questions, the hardest of each dimension first
        rows = sorted(
            (r for r in rows if r["question_id"] in rank), key=lambda r: rank[r["question_id"]]
        )
    picked: dict[str, dict] = {}
    for row in rows:
        picked.setdefault(row["dimension"], row)
    chosen = list(picked.values())[:n_examples]
    chosen += [r for r in rows if r not in chosen][: max(0, n_examples - len(chosen))]
    return RunState(
        table_rows=run.counts(),
        quarantine_by_stage_reason={
            s: dict(sorted(r.items())) for s, r in sorted(by_stage.items())
        },
        quarantine_examples=first,
        examples=[Example(**row) for row in chosen],
        decisions=dict(sorted(decisions.items())),
    )


def _letters(options: list[str]) -> list[str]:
    return [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]


def ingest_markdown(summary: IngestSummary) -> str:
    lines = [
        "# Ingest",
        "",
        "| count | value |",
        "|---|---|",
        f"| images read | {summary.images_read} |",
        f"| images decoded | {summary.images_decoded} |",
        f"| images added | {summary.images_added} |",
        f"| images already stored | {summary.images_already_stored} |",
        f"| exact duplicates merged | {summary.exact_duplicates} |",
        f"| near duplicates flagged | {summary.near_duplicates} |",
        f"| seed questions read | {summary.seed_questions_read} |",
        f"| candidates added | {summary.candidates_added} |",
        f"| quarantined | {sum(summary.quarantined_by_reason.values())} |",
        "",
        "## Quarantined, by reason",
        "",
    ]
    lines += [f"- `{reason}`: {n}" for reason, n in summary.quarantined_by_reason.items()] or [
        "- nothing"
    ]
    if summary.warnings:
        lines += ["", "## Warnings", "", *(f"- {w}" for w in summary.warnings)]
    return "\n".join(lines) + "\n"


def extract_markdown(summary: ExtractSummary) -> str:
    lines = [
        "# Extract",
        "",
        f"Configuration `{summary.config_hash}`: "
        + ", ".join(f"{e['role']} = {e['backend']}" for e in summary.extractors),
        "",
        "| count | value |",
        "|---|---|",
        f"| images in the run | {summary.images_total} |",
        f"| already extracted | {summary.images_already_done} |",
        f"| extracted now | {summary.images_extracted} |",
        f"| instances per image | {summary.mean_instances:.1f} |",
        f"| OCR lines per image | {summary.mean_ocr_lines:.1f} |",
        f"| captions per image | {summary.mean_captions:.1f} |",
        f"| quarantined | {sum(summary.quarantined_by_reason.values())} |",
        "",
        "| backend | seconds |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v:.2f} |" for k, v in summary.seconds_by_backend.items()]
    lines += [f"| total (wall) | {summary.seconds_total:.2f} |"]
    if summary.example_context:
        lines += [
            "",
            f"## Visual context of image `{summary.example_image[:12]}`",
            "",
            "```",
            summary.example_context,
            "```",
        ]
    return "\n".join(lines) + "\n"


def build_markdown(summary: BuildSummary) -> str:
    lines = [
        f"# Build `{summary.spec}`",
        "",
        f"Run folder: `{summary.run}`",
        "",
        "| table | rows |",
        "|---|---|",
    ]
    lines += [f"| {t} | {n} |" for t, n in summary.table_rows.items()]
    sel = summary.of("select")
    if isinstance(sel, SelectSummary):
        lines += ["", "## Quality control", ""]
        lines += ["- decisions: " + ", ".join(f"`{k}` {v}" for k, v in sel.decisions.items())]
        lines += [
            f"- {d.dimension}: selected {d.selected} of {d.target}"
            + (f" (short by {d.shortfall})" if d.shortfall else "")
            for d in sel.dimensions
        ]
        lines += [f"- report: `{sel.report}`, plots: `{sel.plot}`"]
    lines += ["", "## Quarantine by stage and reason", ""]
    for stage, reasons in summary.quarantine_by_stage_reason.items():
        lines += [f"- {stage}: " + ", ".join(f"`{r}` {n}" for r, n in reasons.items())]
    if summary.examples:
        lines += ["", "## Example questions", ""]
        for ex in summary.examples:
            lines += [
                f"- **{ex.question}** ({ex.dimension}) "
                + "; ".join(_letters(ex.options))
                + f" — answer {ex.answer}"
            ]
    return "\n".join(lines) + "\n"


def ingest_text(ing: IngestSummary) -> list[str]:
    """The ingest stage's lines in the build's closing report."""
    return [
        "",
        "Ingest:",
        f"  images read {ing.images_read}, decoded {ing.images_decoded}, newly stored {ing.images_added}, "
        f"already stored {ing.images_already_stored}",
        f"  exact duplicates merged {ing.exact_duplicates}, near duplicates flagged {ing.near_duplicates}",
        f"  seed questions read {ing.seed_questions_read}, candidates newly stored {ing.candidates_added}",
        *(f"  warning: {w}" for w in ing.warnings),
    ]


def extract_text(ext: ExtractSummary) -> list[str]:
    backends = ", ".join(f"{e['role']} {e['backend']}" for e in ext.extractors)
    out = [
        "",
        f"Extract ({backends}):",
        f"  images extracted {ext.images_extracted}, already done {ext.images_already_done}"
        + (
            f"; per image: {ext.mean_instances:.1f} instances, {ext.mean_ocr_lines:.1f} OCR lines, "
            f"{ext.mean_captions:.1f} captions"
            if ext.images_extracted
            else " (nothing new to extract)"
        ),
        "  seconds by backend: "
        + (", ".join(f"{k} {v:.1f}" for k, v in ext.seconds_by_backend.items()) or "none")
        + f" (wall {ext.seconds_total:.1f})",
    ]
    if ext.example_context and ext.example_image:
        out += [
            f"  visual context of image {ext.example_image[:12]} (what a question writer reads):"
        ]
        out += [f"    {line}" for line in ext.example_context.splitlines()[:14]]
    return out


def generate_text(gen: GenerateSummary) -> list[str]:
    return [
        "",
        f"Generate ({gen.taxonomy}):",
        f"  drafts {gen.drafts} from {gen.images} images, candidates {gen.candidates} ({gen.candidates_added} new)",
        "  by generator: " + ", ".join(f"{k} {v}" for k, v in gen.by_generator.items()),
        "  answer letters: " + ", ".join(f"{k} {v}" for k, v in gen.letter_distribution.items()),
        "  refused: "
        + (", ".join(f"{k} {v}" for k, v in gen.refused_by_reason.items()) or "nothing"),
        "  seed questions refused: "
        + (", ".join(f"{k} {v}" for k, v in gen.seeds_refused_by_reason.items()) or "none"),
    ]


def build_text(summary: BuildSummary) -> str:
    """The closing report of a build, for a person reading a terminal: each stage's lines as its
    registry entry renders them, then the state of the run folder."""
    from benchfoundry.pipeline.registry import STAGES

    out = [f"Build '{summary.spec}' finished (stages: {', '.join(summary.stages)})."]
    for name, stage_summary in summary.summaries.items():
        out += STAGES[name].text(stage_summary)
    out += ["", "Tables in the run folder:"]
    out += [f"  {table:<14} {rows:>6} rows" for table, rows in summary.table_rows.items()]
    out += ["", "Quarantined (refused, with reasons; all cases are in the quarantine table):"]
    if not summary.quarantine_by_stage_reason:
        out += ["  nothing"]
    for stage, reasons in summary.quarantine_by_stage_reason.items():
        for reason, n in reasons.items():
            example = summary.quarantine_examples.get(stage, {}).get(reason, "")
            out += [f"  {stage:<8} {reason:<24} {n:>4}   e.g. {example}"]
    if summary.examples:
        out += ["", "Example questions:"]
        for ex in summary.examples:
            out += [f"  [{ex.dimension}] {ex.question}"]
            out += [f"      {line}" for line in _letters(ex.options)]
            out += [f"      answer: {ex.answer}   (from {ex.source})"]
    out += ["", f"Outputs: {summary.run}", f"  manifest: {summary.manifest}"]
    for name, stage_summary in summary.summaries.items():
        if STAGES[name].closing is not None:
            out += STAGES[name].closing(stage_summary)
    return "\n".join(out)
