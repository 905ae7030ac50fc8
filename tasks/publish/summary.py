"""What the publish stage reports: the release it wrote (or found already published), the gate's
result and its Data Docs, what was left out and why; rendered for the CLI, artifacts and the
build's closing report."""

from __future__ import annotations

from benchfoundry.validation.gate import GateResult
from pydantic import BaseModel


class PublishSummary(BaseModel):
    run: str
    name: str
    version: str
    release: str  # the version's folder
    written: bool  # false: this content was already published as `version`
    latest: str | None  # the version `latest` names after this publish
    parent: str | None
    rows: int
    images: int
    per_dimension: dict[str, int]
    human_reviewed: int
    auto_only: int  # accepted by the automatic reviewer only (allow_unreviewed)
    left_out: dict[str, int]  # why candidates are not in the release
    changes: dict[str, int]  # added, removed, changed against the parent
    tsv_differences: list[str] = []  # questions VLMEvalKit's TSV reader reads otherwise
    gate: GateResult
    files: list[str]  # relative to the release folder
    load: str  # a line of Python that loads it with `datasets`


def _gate_line(summary: PublishSummary) -> str:
    g = summary.gate
    passed = sum(c.success for c in g.checks)
    skipped = f"; skipped: {', '.join(g.skipped)}" if g.skipped else ""
    return f"gate: {'passed' if g.success else 'FAILED'}, {passed} of {len(g.checks)} expectations met{skipped}"


def publish_markdown(summary: PublishSummary) -> str:
    state = "written" if summary.written else "already published (nothing written)"
    lines = [
        f"# Release {summary.name} {summary.version}",
        "",
        f"{summary.rows} questions on {summary.images} images, {state}: `{summary.release}`",
        "",
        f"- {_gate_line(summary)}; Data Docs: `{summary.gate.data_docs}`",
        f"- decided by a person: {summary.human_reviewed}; accepted by the automatic reviewer only: "
        f"{summary.auto_only}",
        f"- against the parent ({summary.parent or 'none'}): "
        + ", ".join(f"{k} {v}" for k, v in summary.changes.items()),
        "",
        "| dimension | questions |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in summary.per_dimension.items()),
    ]
    if summary.left_out:
        lines += ["", "| not released because | candidates |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in summary.left_out.items()]
    lines += ["", "Load it:", "", "```python", summary.load, "```"]
    return "\n".join(lines) + "\n"


def publish_text(summary: PublishSummary) -> list[str]:
    state = "published" if summary.written else "already published, nothing written"
    out = [
        "",
        f"Release {summary.name} {summary.version} ({state}): {summary.rows} questions",
        f"  {summary.release}",
        f"  {_gate_line(summary)}",
        f"  Data Docs: {summary.gate.data_docs}",
    ]
    if summary.auto_only:
        out.append(
            f"  {summary.auto_only} of {summary.rows} questions were accepted by the automatic "
            "reviewer only, not by a person (allow_unreviewed; the data and the card say so)"
        )
    if summary.left_out:
        out.append("  not released: " + ", ".join(f"{v} {k}" for k, v in summary.left_out.items()))
    out += [f"  load it: {summary.load}"]
    return out


def publish_closing(summary: PublishSummary) -> list[str]:
    """The release's place among the build's outputs, and how to load it."""
    return [
        f"  release: {summary.release}  ({summary.name} {summary.version}, {summary.rows} questions"
        + (
            f", {summary.auto_only} accepted automatically, not by a person)"
            if summary.auto_only
            else ")"
        ),
        f"  publish gate: {'passed' if summary.gate.success else 'FAILED'}; Data Docs: {summary.gate.data_docs}",
        f"  load it: {summary.load}",
    ]
