"""The review stage's options (the spec's `options.review`): who reviews what, in batches."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, field_validator

from benchfoundry.core.locations import is_fixed
from benchfoundry.core.options import Fix, SpecModel, StageOptionsModel


class Reviewer(SpecModel):
    """A person who reviews candidates; `dimensions` empty: every dimension, `languages` empty:
    the items and every language's twins."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$", description="the reviewer's user name"
    )
    dimensions: list[str] = Field(
        default_factory=list, description="the dimensions they review (empty: all)"
    )
    languages: list[str] = Field(
        default_factory=list,
        description="the languages they review: `en` for the items, a twin's language (e.g. "
        "`zh`) for its twins; empty: all",
    )

    @field_validator("name")
    @classmethod
    def _not_auto(cls, value: str) -> str:
        if value == "auto":
            raise ValueError("'auto' is the automatic reviewer's name; give people other names")
        return value


class ReviewOptions(StageOptionsModel):
    """The review hand-off: which candidates go to people, in batches per dimension and reviewer,
    with a share cross-checked by a second reviewer (MMStar)."""

    include: list[Literal["selected", "flagged", "held_back", "dropped", "unassessed"]] = Field(
        default_factory=lambda: ["selected", "flagged"],
        description="the quality-control decisions whose candidates go to people",
    )
    reviewers: list[Reviewer] = Field(
        default_factory=lambda: [Reviewer(name="reviewer")],
        description="people and their dimensions (default: one reviewer for everything)",
    )
    batch_size: int = Field(default=50, ge=1, description="questions per review batch")
    cross_check: float = Field(
        default=0.2, ge=0, le=1, description="share of each reviewer's samples given to a second"
    )
    suspects: str | None = Field(
        default=None,
        description="an items.parquet from `benchfoundry report`: batch its suspect items "
        "(whatever their decision, again for a reviewer who saw them) instead of `include`",
    )
    auto: bool = Field(
        default=False,
        description="the `auto` reviewer accepts the candidates that passed every automatic "
        "check (selected, no flags); recorded as reviewer auto, never counted as a person",
    )

    database: str | None = Field(
        default=None,
        description="the review database's SQLAlchemy URL (e.g. postgresql://reviews@db/run1) "
        "for a team server; default SQLite in the run folder. No password here (the spec is "
        "stored in the run's manifest): PostgreSQL reads it from PGPASSWORD or ~/.pgpass",
    )

    @field_validator("database")
    @classmethod
    def _no_password(cls, value: str | None) -> str | None:
        if value is None:
            return value
        import sqlalchemy as sa

        try:
            url = sa.engine.make_url(value)
        except sa.exc.ArgumentError:
            raise ValueError(
                f"'{value}' is not a database URL (dialect://user@host/name)"
            ) from None
        if url.password:
            raise ValueError(
                "the database URL holds a password, which would be stored with the run: leave it "
                "out and set PGPASSWORD or ~/.pgpass (or pass --database on the command line)"
            )
        return value

    @field_validator("reviewers")
    @classmethod
    def _unique(cls, value: list[Reviewer]) -> list[Reviewer]:
        names = [r.name for r in value]
        if len(set(names)) != len(names):
            raise ValueError(f"reviewer names must be unique: {names}")
        if not value:
            raise ValueError("name at least one reviewer")
        return value

    def named_dimensions(self) -> dict[str, list[str]]:
        return {
            "options.review.reviewers[].dimensions": [
                d for r in self.reviewers for d in r.dimensions
            ]
        }

    def resolved(self, fix: Fix, base: Path) -> Self:  # noqa: ARG002
        if self.suspects is None or is_fixed(self.suspects):
            return self
        return self.model_copy(update={"suspects": str(fix(self.suspects))})
