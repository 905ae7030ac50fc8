"""The ingest stage's summary, and how it shows itself (artifact, closing report)."""

from __future__ import annotations

from pydantic import Field

from benchfoundry.core.summary import StageSummary


class IngestSummary(StageSummary):
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
    clips_read: int = 0
    clips_added: int = 0
    segments_added: int = 0
    keyframes_added: int = 0
    # Images stored as a person sees them rather than as given, by what was done (EXIF
    # orientation applied, transparency painted on white, colour profile converted...).
    normalised_by_step: dict[str, int] = Field(default_factory=dict)

    def markdown(self) -> str:
        lines = [
            "# Ingest",
            "",
            "| count | value |",
            "|---|---|",
            f"| images read | {self.images_read} |",
            f"| images decoded | {self.images_decoded} |",
            f"| images added | {self.images_added} |",
            f"| images already stored | {self.images_already_stored} |",
            f"| exact duplicates merged | {self.exact_duplicates} |",
            f"| near duplicates flagged | {self.near_duplicates} |",
            f"| seed questions read | {self.seed_questions_read} |",
            f"| video clips read | {self.clips_read} |",
            f"| video clips added | {self.clips_added} |",
            f"| annotated segments added | {self.segments_added} |",
            f"| keyframes added (as images) | {self.keyframes_added} |",
            f"| images normalised (shown as a viewer shows them) | {self._normalised()} |",
            f"| candidates added | {self.candidates_added} |",
            f"| quarantined | {sum(self.quarantined_by_reason.values())} |",
            "",
            "## Quarantined, by reason",
            "",
        ]
        lines += [f"- `{reason}`: {n}" for reason, n in self.quarantined_by_reason.items()] or [
            "- nothing"
        ]
        if self.warnings:
            lines += ["", "## Warnings", "", *(f"- {w}" for w in self.warnings)]
        return "\n".join(lines) + "\n"

    def _normalised(self) -> str:
        return ", ".join(f"{k} {n}" for k, n in self.normalised_by_step.items()) or "none"

    def lines(self) -> list[str]:
        """The ingest stage's lines in the build's closing report."""
        return [
            "",
            "Ingest:",
            f"  images read {self.images_read}, decoded {self.images_decoded}, newly stored {self.images_added}, "
            f"already stored {self.images_already_stored}",
            f"  exact duplicates merged {self.exact_duplicates}, near duplicates flagged {self.near_duplicates}",
            f"  seed questions read {self.seed_questions_read}, candidates newly stored {self.candidates_added}",
            *(
                [
                    f"  video clips read {self.clips_read}, newly stored {self.clips_added}; "
                    f"segments {self.segments_added}, keyframes {self.keyframes_added}"
                ]
                if self.clips_read
                else []
            ),
            *(
                [f"  stored as a viewer shows them: {self._normalised()}"]
                if self.normalised_by_step
                else []
            ),
            *(f"  warning: {w}" for w in self.warnings),
        ]
