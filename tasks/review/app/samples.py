"""A review batch's samples as the desk shows them: each item's text and key as the reviewer's
own decision leaves them (and as written, where that changed them), its image and provenance,
the key's evidence drawn over the image, quality control's decision and hits, each model's first
answer, and, for a Chinese twin, its English item beside it and whether that item changed since
the twin was written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import JudgementRecord, ReviewBatchRecord
from benchfoundry.decisions.outcomes import as_decided, english_change, why_outdated
from benchfoundry.decisions.reviews import medium_of
from benchfoundry.decisions.twins import twin_parts
from benchfoundry.tasks.review.app.provenance import origin, taxonomy_path

if TYPE_CHECKING:
    from benchfoundry.tasks.review.app.data import ReviewData


def batch_samples(
    data: ReviewData, batch: ReviewBatchRecord, offset: int = 0, limit: int | None = None
) -> list[dict[str, Any]]:
    """The batch's samples from `offset` (at most `limit`), in the batch's order."""
    asked = batch.question_ids[offset : None if limit is None else offset + limit]
    wanted = set(asked)
    every = data.items()
    candidates = {q: every[q] for q in asked if q in every}
    scored = data.scored()
    judgements = data.judgements()
    twins = data.translations()
    english = {q: twin_parts(q)[0] for q in asked}
    # whose models' answers a sample shows: its own, else (a twin never asked) its English
    # item's, said so on the page
    answers_of = {q: q if judgements.get(q) else english[q] for q in asked}
    current = data.store.latest(wanted | set(english.values()))  # twins' English items too
    overlays = data.overlays(list(candidates.values()))
    files = data.image_files({c.image_id for c in candidates.values()})
    out = []
    for qid in asked:
        c = candidates.get(qid)
        if c is None:
            continue
        s = scored.get(english[qid])
        mine = current.get(qid, {}).get(batch.reviewer)
        # the text and key as the reviewer's own decision leaves them (an edit, a fix)
        shown = as_decided(c.question, c.options, c.answer, mine)
        original = every.get(english[qid]) if qid != english[qid] else None
        # a twin: its English item as review left it, and whether that changed it
        change = english_change(current.get(english[qid], {})) if original else None
        english_shown = (
            as_decided(original.question, original.options, original.answer, change)
            if original
            else None
        )
        out.append(
            {
                "question_id": qid,
                "image_id": c.image_id,
                "dimension": c.dimension,
                "taxonomy_path": taxonomy_path(c),
                "question": shown.question,
                "hint": c.hint,
                "options": [{"letter": LETTERS[i], "text": t} for i, t in enumerate(shown.options)],
                "answer": shown.answer,
                # as written, where the reviewer's decision changed the text or key
                "as_written": None
                if (shown.question, shown.options, shown.answer)
                == (c.question, list(c.options), c.answer)
                else {
                    "question": c.question,
                    "options": [{"letter": LETTERS[i], "text": t} for i, t in enumerate(c.options)],
                    "answer": c.answer,
                },
                "source": c.source,
                "generator": c.generator,
                "meta": dict(c.meta),
                "medium": medium_of(c),
                "origin": {**origin(c), "files": files.get(c.image_id, [])},
                "evidence": list(c.evidence),
                "overlay": overlays[qid],
                "decision": s.decision if s else None,
                "reason": s.reason if s else None,
                "flags": list(s.flags) if s else [],
                "difficulty": s.difficulty if s else None,
                "hits_text": s.hits_text if s else None,
                "n_text_models": s.n_text_models if s else None,
                "hits_vlm": s.hits_vlm if s else None,
                "n_vlm_models": s.n_vlm_models if s else None,
                "answers": _answers(judgements.get(answers_of[qid], [])),
                "answers_of": answers_of[qid],
                "scored_of": english[qid] if s else None,
                # a twin's page shows its English item beside it (the twin is decided on)
                "language": c.meta.get("language") if original else None,
                "english": None
                if original is None or english_shown is None
                else {
                    "question_id": original.question_id,
                    "question": english_shown.question,
                    "hint": original.hint,
                    "options": [
                        {"letter": LETTERS[i], "text": t}
                        for i, t in enumerate(english_shown.options)
                    ],
                    "answer": english_shown.answer,
                },
                # a twin written before its English item changed in review: not accepted
                "outdated": None
                if change is None or english_shown is None
                else {
                    "why": why_outdated(english[qid], change),
                    "reviewer": change.reviewer,
                    "decision": change.decision,
                    "answer": english_shown.answer,
                },
                "review": mine.model_dump(mode="json") if mine else None,
                "twins": [  # shown under the English item; decided on in their own batches
                    {
                        "language": t.language,
                        "question": t.question,
                        "options": [
                            {"letter": LETTERS[i], "text": o} for i, o in enumerate(t.options)
                        ],
                        "method": t.method,
                        # written before this item's text or key changed in review
                        "outdated": english_change(current.get(qid, {})) is not None,
                    }
                    for t in (twins.get(qid, []) if original is None else [])
                ],
            }
        )
    return out


def _answers(judgements: list[JudgementRecord]) -> list[dict[str, Any]]:
    """Each model's first-pass answer (the option's text, or its error), by mode and model."""
    out = []
    for j in judgements:
        chosen = None
        if j.extracted and j.extracted in LETTERS[: len(j.option_order)]:
            chosen = j.option_order[LETTERS.index(j.extracted)]
        out.append(
            {
                "model": j.model,
                "mode": j.mode,
                "answer": chosen,
                "correct": j.correct,
                "error": j.error_kind,
            }
        )
    return sorted(out, key=lambda a: (a["mode"], a["model"]))
