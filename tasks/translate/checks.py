"""What a twin must satisfy before people see it (MMBench-CN's checks, made mechanical): as many
options as the English item and the same key, every number of the English options kept, no
option left in English unless it is a printed word to read or a proper name, options still
distinct, and a length within bounds. Each failure is a reason the twin is quarantined with."""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchfoundry.core.text import width

REASONS = {
    "option_count_changed": "the twin has another number of options than the English item",
    "answer_changed": "the twin's key is not the English item's",
    "number_lost": "a number of an English option is missing from the twin's option",
    "left_in_english": "an option (or the question) is still English, and is not a printed "
    "word to read or a proper name",
    "options_not_distinct": "two of the twin's options say the same",
    "length_out_of_bounds": "the twin's text is far longer or shorter than the English",
    "empty_text": "the twin's question or an option is empty",
    "malformed_translation": "the translator's reply is not the asked JSON",
    "translator_failed": "the translator model failed (after its retries)",
    "no_translator": "the item has no template form and the spec names no translator model",
}
CHECKS = ("option_count", "answer", "numbers", "language", "distinct", "length")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_LATIN = re.compile(r"[A-Za-z]{2,}")


def _is_chinese(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def problems(
    english_question: str,
    english_options: Sequence[str],
    english_answer: str,
    question: str,
    options: Sequence[str],
    answer: str,
    kept_words: Sequence[str] = (),
    max_ratio: float = 4.0,
) -> list[tuple[str, str]]:
    """(reason, detail) for each check the twin fails; empty when it passes them all.
    `kept_words` are texts allowed to stay as they are (the printed words a reading question
    asks about)."""
    out: list[tuple[str, str]] = []
    if not question.strip() or any(not o.strip() for o in options):
        out.append(("empty_text", "the question or an option is empty"))
    if len(options) != len(english_options):
        out.append(
            ("option_count_changed", f"{len(options)} options, {len(english_options)} in English")
        )
        return out
    if answer != english_answer:
        out.append(("answer_changed", f"key {answer}, {english_answer} in English"))
    for en, tw in zip(english_options, options, strict=True):
        missing = [n for n in _NUMBER.findall(en) if n not in _NUMBER.findall(tw)]
        if missing:
            out.append(("number_lost", f"{', '.join(missing)} of {en!r} not in {tw!r}"))
    kept = {k.strip().casefold() for k in kept_words}
    if not _is_chinese(question):
        out.append(("left_in_english", f"the question {question[:80]!r} holds no Chinese"))
    for en, tw in zip(english_options, options, strict=True):
        english_still = _LATIN.search(tw) and not _is_chinese(tw) and not _NUMBER.fullmatch(tw)
        proper = tw.strip() == en.strip() and (tw.strip().casefold() in kept or tw[:1].isupper())
        if english_still and not proper:
            out.append(("left_in_english", f"option {tw!r} is not Chinese"))
    if len({" ".join(o.casefold().split()) for o in options}) < len(options):
        out.append(("options_not_distinct", " / ".join(options)))
    english = width(english_question) + sum(width(o) for o in english_options)
    twin = width(question) + sum(width(o) for o in options)
    if english and not 1 / max_ratio <= twin / english <= max_ratio:
        out.append(("length_out_of_bounds", f"{twin} against {english} (display width)"))
    return out
