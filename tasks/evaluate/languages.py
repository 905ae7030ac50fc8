"""Evaluation across languages (MMBench's EN/CN): a bilingual release's twins are asked as
items of their own (`<question_id>@<language>`), and each model's loss from English to another
language is measured on the same items: the paired accuracy difference with a 95% interval from
the image-clustered bootstrap and the exact McNemar test, as the model comparisons are."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from benchfoundry.core.ids import content_hash
from benchfoundry.tasks.evaluate.comparisons import Outcomes, pair

SEPARATOR = "@"


def twin_id(question_id: str, language: str, content: str = "") -> str:
    """The item id a twin is asked and stored under: its English item's id, the language, and a
    hash of the twin's own text (a twin translated again is asked again)."""
    if language == "en":
        return question_id
    return f"{question_id}{SEPARATOR}{language}:{content_hash(content, length=8)}"


def language_of(item_id: str) -> tuple[str, str]:
    """(English question id, language) of an item id."""
    base, _, rest = item_id.partition(SEPARATOR)
    return base, rest.split(":", 1)[0] or "en"


class LanguageGap(BaseModel):
    """A model's accuracy in English minus in another language, on the items asked in both."""

    model: str
    with_image: bool
    from_: str = Field(alias="from")
    to: str
    items: int
    accuracy_from: float | None
    accuracy_to: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None  # exact McNemar on the items right in one language only
    note: str | None = None

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    def line(self) -> str:
        if self.difference is None:
            return f"{self.model}: {self.from_} -> {self.to}: {self.note}"
        # A loss reads as one, a gain as one: "gains 26.6% [20.1%, 33.0%]", not "loses -26.6%".
        sign = 1 if self.difference >= 0 else -1
        word = "loses" if sign > 0 else "gains"
        bounds = sorted(sign * b for b in (self.low, self.high)) if self.low is not None else None
        interval = f" [{bounds[0]:.1%}, {bounds[1]:.1%}]" if bounds else f" ({self.note})"
        return (
            f"{self.model}{'' if self.with_image else ' (no image)'}: {self.from_} "
            f"{self.accuracy_from:.1%} -> {self.to} {self.accuracy_to:.1%}, {word} "
            f"{sign * self.difference:.1%} in {self.to}{interval}, McNemar p "
            f"{self.p_value:.4g} on {self.items} items"
        )


def gaps(
    entries: Sequence[tuple[str, bool, Outcomes]], dataset: str, metric: str
) -> list[LanguageGap]:
    """For each (model, with_image, outcomes by item id): its gap from English to each other
    language the outcomes hold, paired over the items asked in both."""
    out = []
    for model, with_image, outcomes in entries:
        by_language: dict[str, Outcomes] = {}
        for item, outcome in outcomes.items():
            base, language = language_of(item)
            by_language.setdefault(language, {})[base] = outcome
        english = by_language.pop("en", {})
        for language, other in sorted(by_language.items()):
            c = pair(model, english, model, other, dataset, with_image, metric)
            out.append(
                LanguageGap(
                    model=model, with_image=with_image, from_="en", to=language, items=c.items,
                    accuracy_from=c.accuracy_a, accuracy_to=c.accuracy_b,
                    difference=c.difference, low=c.low, high=c.high, p_value=c.p_value,
                    note=c.note,
                )
            )  # fmt: skip
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _interval(g: LanguageGap) -> str:
    return "-" if g.low is None or g.high is None else f"[{g.low:+.1%}, {g.high:+.1%}]"


def _rows(gaps_: Sequence[LanguageGap]) -> list[list[str]]:
    return [
        [
            g.model + ("" if g.with_image else " (no image)"),
            f"{g.from_} {_pct(g.accuracy_from)}",
            f"{g.to} {_pct(g.accuracy_to)}",
            "-" if g.difference is None else f"{g.difference:+.1%}",
            _interval(g),
            "-" if g.p_value is None else f"{g.p_value:.4g}",
            str(g.items) + (f" ({g.note})" if g.note else ""),
        ]
        for g in sorted(gaps_, key=lambda g: (g.difference is None, -(g.difference or 0)))
    ]


HEADER = ["model", "from", "to", "gap", "95% interval", "McNemar p", "items"]
EXPLAINED = (
    "The gap is the accuracy in English minus in the other language on the same items. Its 95% "
    "interval is the percentile bootstrap of the paired difference, resampling whole images "
    "(2,000 resamples, fixed seed), widened where narrower to Agresti and Min's interval (half "
    "a count added to each cell), so that a gap where every item went one way is not "
    "zero-width; McNemar p is exact, on the items right in one language only."
)


def languages_markdown(label: str, gaps_: Sequence[LanguageGap]) -> list[str]:
    """The report's section on a bilingual release: each model's accuracy per language and its
    gap, largest loss first (empty when the release has one language)."""
    if not gaps_:
        return []

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("<", "&lt;")

    lines = ["", f"## Across languages: {cell(label)} (the same items, paired)", "", EXPLAINED, ""]
    lines += ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in _rows(gaps_)]
    return lines


def languages_html(label: str, gaps_: Sequence[LanguageGap]) -> str:
    """`languages_markdown` as an HTML section (every value escaped)."""
    import html

    if not gaps_:
        return ""
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in _rows(gaps_)
    )
    return (
        f"<h2>Across languages: {e(label)} (the same items, paired)</h2><p>{e(EXPLAINED)}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
