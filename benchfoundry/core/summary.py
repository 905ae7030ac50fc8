"""The one return type of every stage: a typed summary of what one run did, which renders
itself. `markdown()` is the stage's Prefect artifact and its command's text output, `lines()`
its part of the build's closing report, `closing()` its lines under that report's "Outputs"
(where its files are), `build_markdown()` its section of the build's artifact. A stage's
summary overrides what it shows differently; the defaults show every field, so a new stage
reports something readable from its first run."""

from __future__ import annotations

from pydantic import BaseModel

INCOMPLETE_EXIT = 3  # a command that wrote everything but could not measure all it was asked


class StageSummary(BaseModel):
    """Base of every stage's summary."""

    def title(self) -> str:
        name = type(self).__name__
        return name.removesuffix("Summary") or name

    def _fields(self) -> list[tuple[str, object]]:
        return [(name, getattr(self, name)) for name in type(self).model_fields]

    def markdown(self) -> str:
        rows = [f"| {name} | {value} |" for name, value in self._fields()]
        return "\n".join([f"## {self.title()}", "", "| field | value |", "|---|---|", *rows])

    def lines(self) -> list[str]:
        return ["", f"{self.title()}:", *(f"  {name}: {value}" for name, value in self._fields())]

    def closing(self) -> list[str]:
        return []

    def incomplete(self) -> str | None:
        """What this run could not measure that a scheduled job must notice (the command then
        exits `INCOMPLETE_EXIT` after writing everything), or None."""
        return None

    def build_markdown(self) -> list[str]:
        """Its section of the build's markdown artifact (none by default)."""
        return []
