"""The translate stage's options (the spec's `options.translate`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from benchfoundry.core.options import StageOptionsModel


class TranslateOptions(StageOptionsModel):
    """Options of the translate stage: which languages, and which items get a twin."""

    languages: list[Literal["zh"]] = Field(
        default_factory=lambda: ["zh"],
        description="the languages every included item gets a twin in (BCP-47; `zh`, Chinese)",
    )
    include: Literal["all"] | list[Literal["selected", "flagged"]] = Field(
        default_factory=lambda: ["selected", "flagged"],
        description="which candidates get twins: quality control's `selected` and `flagged` "
        "(what goes to review), or `all`",
    )
    max_length_ratio: float = Field(
        default=4.0,
        gt=1,
        description="a twin's text may be this many times longer or shorter than the English "
        "(Chinese characters count as two)",
    )

    def reads(self) -> dict[str, tuple[str, str]]:
        """Which items are selected or flagged is quality control's decision (`scored`)."""
        return {} if self.include == "all" else {"options.translate.include": ("scored", "select")}

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:
        """The translator, when the spec names one (asked for the items with no template form;
        without it the first generator is, which the generate stage's check covers when it
        writes questions)."""
        return {"models.translator": roles["translator"][:1]} if roles.get("translator") else {}
