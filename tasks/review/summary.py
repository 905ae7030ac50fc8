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
    # selected template questions the automatic reviewer left to people, by why: their image's
    # objects are slivers or regions no recogniser labelled (`unlabeled_regions`), or unknown
    auto_withheld: dict[str, int] = {}
    serve: str  # the command that opens the review app on this run
    # `review export --suspects`: the item analysis's suspects batched (question id -> why), and
    # those this run has no candidate for (another run's items?)
    suspects: dict[str, str] = {}
    suspects_unknown: list[str] = []
    twins: dict[str, int] = {}  # language -> twins of included candidates, batched as their own

    def _suspect_lines(self) -> list[str]:
        out = [f"suspect {q}: {why}" for q, why in self.suspects.items()]
        if self.suspects_unknown:
            out.append(
                f"{len(self.suspects_unknown)} suspect items are not candidates of this run "
                f"(was the report made on another run's release?): "
                + ", ".join(self.suspects_unknown[:5])
            )
        return out

    def _withheld_lines(self) -> list[str]:
        if not self.auto_withheld:
            return []
        why = ", ".join(f"{k} {v}" for k, v in sorted(self.auto_withheld.items()))
        return [
            f"Left to people by the automatic reviewer (template questions whose image's facts "
            f"do not support them: regions that are not plainly objects, or readings that do "
            f"not agree): {sum(self.auto_withheld.values())} ({why})"
        ]

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
        if self.twins:
            lines += [
                "",
                "Twins reviewed as items of their own: "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.twins.items())),
            ]
        if self.unassigned:
            lines += [
                "",
                "No reviewer covers: "
                + ", ".join(f"{d} ({n})" for d, n in self.unassigned.items()),
            ]
        if self.suspects or self.suspects_unknown:
            lines += ["", "Suspect items sent back to people:", ""]
            lines += [f"- {x}" for x in self._suspect_lines()]
        lines += [
            "",
            f"Accepted by the automatic reviewer (`auto`, not a person): {self.auto_accepted}",
            *self._withheld_lines(),
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
        if self.twins:
            out.append(
                "  twins, reviewed as items of their own: "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.twins.items()))
            )
        if self.unassigned:
            out.append(
                "  no reviewer covers: " + ", ".join(f"{d} {n}" for d, n in self.unassigned.items())
            )
        out += [f"  {x}" for x in self._suspect_lines()]
        if self.auto_accepted:
            out.append(
                f"  accepted by the automatic reviewer (auto, not a person): {self.auto_accepted}"
            )
        out += [f"  {x}" for x in self._withheld_lines()]
        out.append(f"  open the review app: {self.serve}")
        return out
