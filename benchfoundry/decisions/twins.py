"""Twins in review (MMBench-CN's human-verified translations): an item's twin in another
language is reviewed as an item of its own, `<question_id>@<language>`, in batches of its own
kind, beside its English item. A twin keeps its English item's key, option count and dimension,
so a reviewer accepts it, rejects it or edits its text; fixing the key or moving the item is a
decision on the English item."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from benchfoundry.core.records import CandidateRecord, TranslationRecord
from benchfoundry.storage.tables import RunFolder

SEPARATOR = "@"
TWIN_DECISIONS = ("accept", "reject", "edit")


def twin_review_id(question_id: str, language: str) -> str:
    """The id a twin is reviewed under."""
    return f"{question_id}{SEPARATOR}{language}"


def twin_parts(item_id: str) -> tuple[str, str | None]:
    """(English question id, language) of a reviewed item id; language None for an English
    item (question ids are hashes, which hold no separator)."""
    base, found, language = item_id.partition(SEPARATOR)
    return (base, language) if found and language else (item_id, None)


def twin_candidate(english: CandidateRecord, twin: TranslationRecord) -> CandidateRecord:
    """The twin as a reviewable item: its own text, its English item's image, key, dimension
    and provenance; `meta` names the language, the English item and how it was written."""
    meta = {**english.meta, "language": twin.language, "twin_of": english.question_id}
    meta["translation"] = twin.method
    return english.model_copy(
        update={
            "question_id": twin_review_id(english.question_id, twin.language),
            "question": twin.question,
            "hint": twin.hint,
            "options": list(twin.options),
            "answer": twin.answer,
            "meta": meta,
        }
    )


def twin_candidates(
    candidates: Mapping[str, CandidateRecord], twins: Iterable[TranslationRecord]
) -> dict[str, CandidateRecord]:
    """twin review id -> the twin as an item, for the twins whose English item is a candidate."""
    out = {}
    for t in twins:
        english = candidates.get(t.question_id)
        if english is not None:
            item = twin_candidate(english, t)
            out[item.question_id] = item
    return out


def language_of(item: CandidateRecord) -> str | None:
    """The twin's language, None for an English item (from its id: a candidate's `meta` may
    hold any column of a source)."""
    return twin_parts(item.question_id)[1]


def review_items(run: RunFolder) -> dict[str, CandidateRecord]:
    """Everything a decision may be about: the run's candidates and their twins."""
    candidates = {c.question_id: c for c in run.table(CandidateRecord).records()}
    table = run.table(TranslationRecord)
    if table.exists():
        candidates.update(twin_candidates(candidates, table.records()))
    return candidates
