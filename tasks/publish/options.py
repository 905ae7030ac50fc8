"""The publish stage's options (the spec's `options.publish`): where versions go, and the
publish gate's tolerances (docs/publish.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field

from benchfoundry.core.locations import Location, is_fixed
from benchfoundry.core.options import Fix, StageOptionsModel


class PublishOptions(StageOptionsModel):
    """The release: where versions go, and the publish gate's tolerances (docs/publish.md)."""

    to: Location = Field(
        default=Path("releases"),
        description="the releases folder (relative to the spec's folder) or a URL "
        "(s3://bucket/releases): <to>/<name>/<version>/",
    )
    allow_unreviewed: bool = Field(
        default=False,
        description="release questions only the automatic reviewer accepted (the data and the "
        "card say which); otherwise every released question needs a person's decision",
    )
    letter_tolerance: float = Field(
        default=0.15,
        gt=0,
        le=1,
        description="the most a letter's share of answers may differ from its chance share",
    )
    longest_answer_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="the most questions whose strictly longest option is the answer (a leak)",
    )
    rows_per_file: int = Field(default=5000, ge=1, description="questions per Parquet file")
    row_group_rows: int = Field(
        default=100, ge=1, description="questions per Parquet row group (bounded memory)"
    )
    license: str | None = Field(
        default=None, description="the card's licence id (default: from the sources' licences)"
    )
    card_results: bool = Field(
        default=False,
        description="the card reports the run's evaluation of the same questions (accuracy per "
        "language, the language gaps) when there is one: publishing again after an evaluation "
        "makes a child version with the same data and a card with its results",
    )
    pretty_name: str | None = Field(
        default=None, description="the dataset card's title (default: the spec's name)"
    )

    def resolved(self, fix: Fix, base: Path) -> Self:  # noqa: ARG002
        return self if is_fixed(self.to) else self.model_copy(update={"to": fix(self.to)})
