"""What the review stage reports: the batches handed out, and the state of the reviews
(progress, conflicts, agreement), rendered for the CLI, artifacts and `RUN/reports/review.md`."""

from __future__ import annotations

from benchfoundry.core.summary import StageSummary


class ReviewSummary(StageSummary):
    run: str
    candidates: int  # included by `review.include`
    batches: int
    batches_added: int
    questions_batched_now: int
    per_reviewer: dict[str, int]  # reviewer -> questions in their batches
    cross_checked: int
    unassigned: dict[str, int]  # dimension -> candidates no reviewer covers
    auto_accepted: int
    auto_accepted_now: int
    serve: str  # the command that opens the review app on this run

    def markdown(self) -> str:
        lines = [
            "# Review hand-off",
            "",
            f"{self.candidates} candidates for review, in {self.batches} batches "
            f"({self.batches_added} new, {self.questions_batched_now} questions batched now); "
            f"{self.cross_checked} also given to a second reviewer.",
            "",
            "| reviewer | questions |",
            "|---|---|",
            *(f"| {k} | {v} |" for k, v in self.per_reviewer.items()),
        ]
        if self.unassigned:
            lines += [
                "",
                "No reviewer covers: "
                + ", ".join(f"{d} ({n})" for d, n in self.unassigned.items()),
            ]
        lines += [
            "",
            f"Accepted by the automatic reviewer (`auto`, not a person): {self.auto_accepted}",
            "",
            f"Open the review app: `{self.serve}`",
        ]
        return "\n".join(lines) + "\n"

    def lines(self) -> list[str]:
        out = [
            "",
            f"Review: {self.candidates} candidates in {self.batches} batches "
            f"({self.batches_added} new), {self.cross_checked} cross-checked",
            "  per reviewer: " + ", ".join(f"{k} {v}" for k, v in self.per_reviewer.items()),
        ]
        if self.unassigned:
            out.append(
                "  no reviewer covers: " + ", ".join(f"{d} {n}" for d, n in self.unassigned.items())
            )
        if self.auto_accepted:
            out.append(
                f"  accepted by the automatic reviewer (auto, not a person): {self.auto_accepted}"
            )
        out.append(f"  open the review app: {self.serve}")
        return out
