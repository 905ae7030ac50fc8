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
        ]
