"""The translate stage's summary, and how it shows itself (artifact, closing report)."""

from __future__ import annotations

from benchfoundry.core.summary import StageSummary


class TranslateSummary(StageSummary):
    run: str
    languages: list[str]
    items: int  # candidates included (per language)
    twins_added: int
    already_done: int
    by_method: dict[str, int]  # template, llm
    refused_by_reason: dict[str, int]
    example: dict[str, str] | None = None
    no_translator: int = 0  # twins not written: no template form, and no translator model
    no_translator_examples: list[str] = []  # a few of those items' questions

    def warning(self) -> str | None:
        """Twins that will be missing from the release because no model was named to write
        them: said before the release, with the fix."""
        if not self.no_translator:
            return None
        shown = "; ".join(repr(q[:80]) for q in self.no_translator_examples)
        return (
            f"WARNING: {self.no_translator} twin(s) not written: their items are outside the "
            f"template grammar (e.g. {shown}) and the spec names no translator; name one in "
            "models.translator (an OpenAI-compatible model) to have them translated, or they "
            "stay out of the release's other languages"
        )

    def _refused(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.refused_by_reason.items()) or "nothing"

    def markdown(self) -> str:
        lines = [
            f"# Translate ({', '.join(self.languages)})",
            "",
            f"{self.items} items included; {self.twins_added} twins written now "
            f"({', '.join(f'{k} {v}' for k, v in self.by_method.items()) or 'none'}), "
            f"{self.already_done} already done.",
            "",
            f"Quarantined: {self._refused()}",
            *(["", f"**{self.warning()}**"] if self.warning() else []),
        ]
        if self.example:
            lines += ["", f"Example: {self.example['question']} ({self.example['options']})"]
        return "\n".join(lines) + "\n"

    def lines(self) -> list[str]:
        return [
            "",
            f"Translate ({', '.join(self.languages)}):",
            f"  items {self.items}, twins written {self.twins_added} "
            f"({', '.join(f'{k} {v}' for k, v in self.by_method.items()) or 'none'}), "
            f"already done {self.already_done}",
            f"  quarantined: {self._refused()}",
            *([f"  {self.warning()}"] if self.warning() else []),
        ]
