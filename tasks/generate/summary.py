"""The generate stage's summary, and how it shows itself (artifact, closing report)."""

from __future__ import annotations

from benchfoundry.core.summary import StageSummary


class GenerateSummary(StageSummary):
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
    not_asked: dict[
        str, dict[str, int]
    ] = {}  # dimension -> why its templates asked nothing -> images
    # Pictures the templates asked nothing at all, and the commonest reasons among them, each
    # with how many pictures it held back and up to three of their files (the whole story, per
    # picture, dimension and template, is the run's `not_asked` table).
    images_without_questions: int = 0
    commonest_why_not: list[dict] = []

    def _why_not(self) -> str:
        return "; ".join(
            f"{w['reason']} {w['images']} (e.g. {', '.join(w['examples'])})"
            for w in self.commonest_why_not
        )

    def _not_asked(self) -> str:
        return (
            "; ".join(
                f"{d}: " + ", ".join(f"{k} {v}" for k, v in reasons.items())
                for d, reasons in self.not_asked.items()
            )
            or "nothing"
        )

    def warning(self) -> str | None:
        """Said when images went in and no question came out (a build of photographs offline:
        no generator model, and no template's facts)."""
        if self.candidates or not self.images:
            return None
        why: dict[str, int] = {}
        for reasons in self.not_asked.values():
            for reason, n in reasons.items():
                why[reason] = max(why.get(reason, 0), n)
        top = ", ".join(f"{k} {v}" for k, v in sorted(why.items(), key=lambda kv: -kv[1])[:4])
        return (
            f"WARNING: no question was made from {self.images} images: the templates asked "
            f"nothing ({top or 'no facts'}; docs/generate.md says what each reason means), and no "
            "generator model wrote any (offline, name one in models.generator or set "
            "OPENAI_API_KEY for questions about photographs)"
        )

    def markdown(self) -> str:
        lines = [
            f"# Generate ({self.taxonomy})",
            "",
            f"{self.drafts} drafts from {self.images} images, "
            f"{self.candidates} candidates ({self.candidates_added} new), cost {self.cost:.4f}",
            *(["", f"**{self.warning()}**"] if self.warning() else []),
            "",
            "| dimension | counts |",
            "|---|---|",
        ]
        lines += [
            f"| {d} | " + ", ".join(f"{k} {v}" for k, v in c.items()) + " |"
            for d, c in self.per_dimension.items()
        ]
        by_count = "; ".join(
            f"{n} options: " + ", ".join(f"{k} {v}" for k, v in d.items())
            for n, d in self.letters_by_option_count.items()
        )
        costs = (
            ", ".join(f"{k} {v:.4f}" for k, v in self.cost_by_dimension.items() if v) or "nothing"
        )
        lines += [
            "",
            "Answer letters: " + ", ".join(f"{k} {v}" for k, v in self.letter_distribution.items()),
            f"Answer letters by option count: {by_count}",
            f"Cost by dimension: {costs}",
            "Refused: "
            + (", ".join(f"`{k}` {v}" for k, v in self.refused_by_reason.items()) or "nothing"),
            "By generator: " + ", ".join(f"{k} {v}" for k, v in self.by_generator.items()),
            "Images a dimension's templates could not ask about, by reason (docs/generate.md): "
            + self._not_asked(),
            f"Pictures asked nothing at all: {self.images_without_questions}"
            + (f"; commonest reasons: {self._why_not()}" if self.commonest_why_not else "")
            + " (each picture's reasons: the run's `not_asked` table, `benchfoundry status`)",
        ]
        return "\n".join(lines) + "\n"

    def lines(self) -> list[str]:
        return [
            "",
            f"Generate ({self.taxonomy}):",
            f"  drafts {self.drafts} from {self.images} images, candidates {self.candidates} ({self.candidates_added} new)",
            "  by generator: " + ", ".join(f"{k} {v}" for k, v in self.by_generator.items()),
            "  answer letters: "
            + ", ".join(f"{k} {v}" for k, v in self.letter_distribution.items()),
            "  refused: "
            + (", ".join(f"{k} {v}" for k, v in self.refused_by_reason.items()) or "nothing"),
            "  seed questions refused: "
            + (", ".join(f"{k} {v}" for k, v in self.seeds_refused_by_reason.items()) or "none"),
            "  not asked, per dimension, by reason (docs/generate.md): " + self._not_asked(),
            *(
                [
                    f"  pictures asked nothing at all: {self.images_without_questions}"
                    + (f"; commonest reasons: {self._why_not()}" if self.commonest_why_not else "")
                ]
                if self.images_without_questions
                else []
            ),
            *([f"  {self.warning()}"] if self.warning() else []),
        ]
