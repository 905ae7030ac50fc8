"""Run summaries as typed records, rendered as markdown (Prefect artifacts) and plain text (CLI)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, SerializeAsAny

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import (
    CandidateRecord,
    QuarantineRecord,
    ScoredRecord,
)
from benchfoundry.core.summary import StageSummary
from benchfoundry.storage.not_asked import asked_nothing
from benchfoundry.storage.tables import RunFolder


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
    summaries: dict[str, SerializeAsAny[StageSummary]] = {}
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
    # Pictures the generator asked nothing at all: origin -> the reasons its template kinds gave
    # (the `not_asked` table, docs/generate.md lists what each means).
    asked_nothing: dict[str, list[str]] = {}


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
        asked_nothing=asked_nothing(run),
    )


def _letters(options: list[str]) -> list[str]:
    return [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]


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
    for stage_summary in summary.summaries.values():
        lines += stage_summary.build_markdown()
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


def build_text(summary: BuildSummary) -> str:
    """The closing report of a build, for a person reading a terminal: each stage's lines as its
    registry entry renders them, then the state of the run folder."""
    out = [f"Build '{summary.spec}' finished (stages: {', '.join(summary.stages)})."]
    for stage_summary in summary.summaries.values():
        out += stage_summary.lines()
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
    for stage_summary in summary.summaries.values():
        out += stage_summary.closing()
    return "\n".join(out)
