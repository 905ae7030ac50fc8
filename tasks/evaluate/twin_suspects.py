"""What a suspect twin is (MMBench-CN's twins in the item analysis): each language is fitted on
its own (`items.py`), and a twin is suspect in its language when its discrimination is near zero
or negative. A twin shares its English item's image and key, so its English item tells the two
causes apart:

- the English item is fine (fitted, not suspect, answered right by some): the key and the image
  hold in English, so the twin's text is what misleads. A translation suspect: it goes back to
  people as the twin, `<question_id>@<language>` (`decisions/twins.py`), whose reviewer may
  reject or edit its text;
- the English item is suspect too, or answered right by none: a key suspect of the English item,
  which goes back as the English item (its twins follow it into review); so does a twin whose
  English item was not analysed, as nothing tells the causes apart."""

from __future__ import annotations

from benchfoundry.decisions.twins import twin_review_id
from benchfoundry.tasks.evaluate.languages import language_of

KEY = "key"
TRANSLATION = "translation"
NAMES = {"en": "English", "zh": "Chinese"}


def _name(language: str) -> str:
    return NAMES.get(language, language)


def _is_fine(english: dict) -> bool:
    return (
        english.get("discrimination") is not None
        and not english["suspect"]
        and english["right"] > 0
    )


def judge_twins(rows: list[dict]) -> None:
    """Set the kind, the review item and why of every suspect twin among the item rows (each
    with `question_id`, `language`, `suspect`, `right`, `discrimination`, `discrimination_se`,
    `why`), in place."""
    english = {r["question_id"]: r for r in rows if r["language"] == "en"}
    for row in rows:
        if row["language"] == "en" or not row["suspect"]:
            continue
        base, language = language_of(row["question_id"])
        found = english.get(base)
        if found is not None and _is_fine(found):
            row.update(
                suspect_kind=TRANSLATION,
                review_item=twin_review_id(base, language),
                why=f"translation suspect: its English item {base} is fine; the "
                f"{_name(language)} text may mislead (discrimination "
                f"{row['discrimination']:+.2f} ± {row['discrimination_se']:.2f} in "
                f"{_name(language)}, {found['discrimination']:+.2f} in English)",
            )
            continue
        if found is None or found.get("discrimination") is None:
            why = f"key suspect: its English item {base} was not analysed; {row['why']}"
        elif found["suspect"]:
            why = f"key suspect with its English item {base}, suspect too: {row['why']}"
        else:
            why = f"key suspect: its English item {base} is answered right by none; {row['why']}"
        row.update(suspect_kind=KEY, review_item=base, why=why)
