"""Each language of a bilingual release its own board (MMBench reports MMBench and MMBench-CN
apart): English is the headline board, every other language gets the same board of its own
(accuracy per model with intervals, per category, paired comparisons and rank ranges), over its
own items. Pooling the languages into one board happens only when asked
(`options.evaluate.pool_languages`), and the board then says so."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from benchfoundry.core.records import CallFailureRecord, ResultRecord
from benchfoundry.tasks.evaluate.dataset import EvalDataset
from benchfoundry.tasks.evaluate.summary import POOLED, LanguageBoard

HEADLINE = "en"


def languages_in(dataset: EvalDataset) -> list[str]:
    """The dataset's languages, English first."""
    found = {q.language for q in dataset.questions}
    return sorted(found, key=lambda lang: (lang != HEADLINE, lang))


def of_language(dataset: EvalDataset, language: str) -> EvalDataset:
    """The dataset's items in one language (the same dataset otherwise)."""
    subset = copy.copy(dataset)
    subset.questions = [q for q in dataset.questions if q.language == language]
    subset.name = f"{dataset.name} [{language}]"  # how its comparisons are labelled
    return subset


def headline(dataset: EvalDataset, pool: bool) -> tuple[EvalDataset, str | None]:
    """The items of the headline board and its language (None: one language, nothing to say):
    English, or every language pooled when asked."""
    languages = languages_in(dataset)
    if len(languages) < 2:
        return dataset, None
    if pool:
        return dataset, POOLED
    return of_language(dataset, languages[0]), languages[0]


def other_boards(
    dataset: EvalDataset,
    shown: str | None,
    records: Sequence[ResultRecord],
    done: Sequence,
    failures: Sequence[CallFailureRecord],
    mode: str,
) -> list[LanguageBoard]:
    """The boards of the languages the headline board (`shown`) is not: each scored and
    compared on its own items, as the headline is."""
    from benchfoundry.tasks.evaluate.scoring import compare_scores, score

    if shown is None:
        return []
    boards = []
    for language in languages_in(dataset):
        if language == shown:
            continue
        items = of_language(dataset, language)
        scores = [score(items, records, j, mode == "circular", failures) for j in done]
        comparisons, notes = compare_scores(items, records, done, scores, mode)
        boards.append(
            LanguageBoard(
                language=language,
                questions=len(items.questions),
                scores=scores,
                comparisons=comparisons,
                comparison_notes=notes,
            )
        )
    return boards


def with_languages(scores: Sequence, shown: str | None, boards: Sequence[LanguageBoard]) -> None:
    """Each headline score's `by_language`: its accuracy on every language's board (what the
    release card and `--json` readers take per language); each board's scores take the
    headline's roles in the build (`in_build`, marked on the headline)."""
    roles = {s.model: s.in_build for s in scores}
    for b in boards:
        for s in b.scores:
            s.in_build = roles.get(s.model, [])
    if shown is None or shown == POOLED:
        return
    others = {(b.language, s.model, s.with_image): s for b in boards for s in b.scores}
    for s in scores:
        # failures count on every board: the exit status and the closing line say so
        s.failed_by_language = {shown: s.failed} | {
            b.language: others[(b.language, s.model, s.with_image)].failed for b in boards
        }
        s.failed_all_languages = sum(s.failed_by_language.values())
        s.questions_all_languages = s.questions + sum(b.questions for b in boards)
        own = {"vanilla": s.vanilla, **({"circular": s.circular} if s.circular else {})}
        s.by_language = {shown: own}
        for b in boards:
            other = others[(b.language, s.model, s.with_image)]
            s.by_language[b.language] = {
                "vanilla": other.vanilla,
                **({"circular": other.circular} if other.circular else {}),
            }
