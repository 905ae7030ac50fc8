"""What the publish stage reports: the release it wrote (or found already published), the gate's
result and its Data Docs, what was left out and why; rendered for the CLI, artifacts and the
build's closing report."""

from __future__ import annotations

from benchfoundry.core.summary import StageSummary
from benchfoundry.validation.gate import GateResult


class PublishSummary(StageSummary):
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

    def markdown(self) -> str:
        state = "written" if self.written else "already published (nothing written)"
        lines = [
            f"# Release {self.name} {self.version}",
            "",
            f"{self.rows} questions on {self.images} images, {state}: `{self.release}`",
            "",
            f"- {_gate_line(self)}; Data Docs: `{self.gate.data_docs}`",
            f"- decided by a person: {self.human_reviewed}; accepted by the automatic reviewer only: "
            f"{self.auto_only}",
            f"- against the parent ({self.parent or 'none'}): "
            + ", ".join(f"{k} {v}" for k, v in self.changes.items()),
            "",
            "| dimension | questions |",
            "|---|---|",
            *(f"| {k} | {v} |" for k, v in self.per_dimension.items()),
        ]
        if self.left_out:
            lines += ["", "| not released because | candidates |", "|---|---|"]
            lines += [f"| {k} | {v} |" for k, v in self.left_out.items()]
        lines += ["", "Load it:", "", "```python", self.load, "```"]
        return "\n".join(lines) + "\n"

    def lines(self) -> list[str]:
        state = "published" if self.written else "already published, nothing written"
        out = [
            "",
            f"Release {self.name} {self.version} ({state}): {self.rows} questions",
            f"  {self.release}",
            f"  {_gate_line(self)}",
            f"  Data Docs: {self.gate.data_docs}",
        ]
        if self.auto_only:
            out.append(
                f"  {self.auto_only} of {self.rows} questions were accepted by the automatic "
                "reviewer only, not by a person (allow_unreviewed; the data and the card say so)"
            )
        if self.left_out:
            out.append("  not released: " + ", ".join(f"{v} {k}" for k, v in self.left_out.items()))
        out += [f"  load it: {self.load}"]
        return out

    def closing(self) -> list[str]:
        """The release's place among the build's outputs, and how to load it."""
        return [
            f"  release: {self.release}  ({self.name} {self.version}, {self.rows} questions"
            + (
                f", {self.auto_only} accepted automatically, not by a person)"
                if self.auto_only
                else ")"
            ),
            f"  publish gate: {'passed' if self.gate.success else 'FAILED'}; Data Docs: {self.gate.data_docs}",
            f"  load it: {self.load}",
        ]


def _gate_line(summary: PublishSummary) -> str:
    g = summary.gate
    passed = sum(c.success for c in g.checks)
    skipped = f"; skipped: {', '.join(g.skipped)}" if g.skipped else ""
    return f"gate: {'passed' if g.success else 'FAILED'}, {passed} of {len(g.checks)} expectations met{skipped}"
