"""Judge scores debiased with people's grades (prediction-powered inference).

On an open-ended set every answer is graded by an LLM judge; where people graded some of the
answers too (`options.evaluate.human_grades`, `--human-grades`), each model's score is corrected
with prediction-powered inference (Angelopoulos et al., 2023, `ppi_py`): the mean judge score
over its N answers plus the mean of (human - judge) over the n answers people graded, with a 95%
interval from var(judge) / N + var(human - judge) / n. A judge that grades too high is pulled
down by exactly its measured bias; with few human grades the interval says how little is known.

The human grades are a CSV or JSON Lines file, one grade a row: `question` (the dataset's own
id, MM-Vet's `v1_0`, or benchfoundry's `question_id`), `model` (as evaluated, with or without
its `@endpoint`), `grade` (a number in [0, 1]), `grader` (who graded), and an optional `note`.
Several people grading one answer count as one human grade, their mean. A bad row stops the
evaluation before any model is asked, with its line and why."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from benchfoundry.core.errors import UserError

if TYPE_CHECKING:
    from benchfoundry.core.records import ResultRecord
    from benchfoundry.tasks.evaluate.dataset import EvalDataset
    from benchfoundry.tasks.evaluate.summary import OpenScore

REQUIRED = ("question", "model", "grade", "grader")
OPTIONAL = ("note",)
ALPHA = 0.05  # a 95% interval
SHOWN_ROWS = 5  # bad rows named in the error; unmatched ids named in a note


class HumanGradesError(UserError, ValueError):
    """A human-grades file that cannot be used: the message names the rows and why."""


@dataclass(frozen=True)
class HumanGrade:
    """One person's grade of one model's answer to one question."""

    line: int  # where it is in the file (1 is a CSV's header)
    question: str
    model: str
    grade: float
    grader: str


class Debiased(BaseModel):
    """One model's judge score corrected with people's grades (prediction-powered inference)."""

    model: str
    with_image: bool
    judge: float | None  # mean over its answers of each answer's mean judge grade
    answers: int  # N: answers with a judge grade
    human_graded: int  # n: of them, answers people graded
    graders: list[str] = []
    human_mean: float | None = None  # people's mean grade on the n answers
    judge_on_graded: float | None = None  # the judge's mean on the same n answers
    estimate: float | None = None  # judge + mean(human - judge); None without human grades
    low: float | None = None  # the 95% interval; None with fewer than 2 human grades
    high: float | None = None
    note: str | None = None  # why there is no estimate or no interval


# --- the file ----------------------------------------------------------------------------------


def _rows(path: Path | str) -> Iterable[tuple[int, dict | str]]:
    """(line, row) of a CSV or JSON Lines file; a row that is not an object is its reason."""
    import fsspec

    name = str(path)
    jsonl = name.lower().endswith((".jsonl", ".ndjson"))
    if not jsonl and not name.lower().endswith(".csv"):
        raise HumanGradesError(
            f"human grades {name}: give a .csv or .jsonl file (columns {', '.join(REQUIRED)})"
        )
    try:
        with fsspec.open(name, "rt", encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except FileNotFoundError:
        raise HumanGradesError(f"human grades {name}: no such file") from None
    if jsonl:
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                yield line, f"not JSON ({exc.msg})"
                continue
            yield line, row if isinstance(row, dict) else "not a JSON object"
    else:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise HumanGradesError(
                f"human grades {name}: the header lacks {', '.join(missing)} (columns: "
                f"{', '.join(REQUIRED)}, optional {', '.join(OPTIONAL)})"
            )
        for row in reader:
            yield reader.line_num, row


def _grade(row: dict | str, line: int) -> HumanGrade | str:
    """The row as a grade, or why it is refused."""
    if isinstance(row, str):
        return row
    if None in row:  # csv.DictReader keeps a row's values beyond the header under None
        return "more values than the header has columns"
    unknown = sorted(str(k) for k in row if k not in REQUIRED + OPTIONAL)
    if unknown:
        return f"unknown field {', '.join(unknown)} (fields: {', '.join(REQUIRED + OPTIONAL)})"
    text = {k: "" if row.get(k) is None else str(row[k]).strip() for k in REQUIRED}
    if empty := [k for k in REQUIRED if not text[k]]:
        return f"no {', '.join(empty)}"
    raw = row["grade"]
    try:
        if isinstance(raw, bool):
            raise ValueError
        grade = float(raw)
    except (TypeError, ValueError):
        return f"grade {text['grade']!r} is not a number"
    if not (0.0 <= grade <= 1.0) or math.isnan(grade):
        return f"grade {text['grade']} is outside [0, 1]"
    return HumanGrade(line, text["question"], text["model"], grade, text["grader"])


def read_human_grades(path: Path | str) -> list[HumanGrade]:
    """Every grade of the file; any bad row refuses the file, naming the first few and why."""
    grades: list[HumanGrade] = []
    bad: list[str] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in _rows(path):
        found = _grade(row, line)
        if isinstance(found, HumanGrade):
            key = (found.question, found.model, found.grader)
            if key in seen:
                found = f"{found.grader} graded {found.question} of {found.model} already (line {seen[key]})"
            else:
                seen[key] = line
                grades.append(found)
                continue
        bad.append(f"line {line}: {found}")
    if bad:
        more = f"; and {len(bad) - SHOWN_ROWS} more" if len(bad) > SHOWN_ROWS else ""
        raise HumanGradesError(
            f"human grades {path}: {len(bad)} bad rows: " + "; ".join(bad[:SHOWN_ROWS]) + more
        )
    if not grades:
        raise HumanGradesError(f"human grades {path}: no grades in the file")
    return grades


def human_grades_for(dataset: EvalDataset, location: Path | str | None) -> list[HumanGrade]:
    """The human grades an evaluation was given (none when it was given no file); refused on a
    multiple-choice set, whose answers are right or wrong, not graded."""
    if location is None:
        return []
    if not dataset.open_ended:
        raise HumanGradesError(
            f"human grades correct an LLM judge's grades of open-ended answers; "
            f"{dataset.described} is multiple-choice (drop options.evaluate.human_grades, "
            "--human-grades)"
        )
    return read_human_grades(location)


# --- the estimator -----------------------------------------------------------------------------


def ppi_mean(
    human: Sequence[float], judge_graded: Sequence[float], judge_all: Sequence[float]
) -> tuple[float, float | None, float | None]:
    """Prediction-powered estimate of a mean grade and its 95% interval (None below 2 human
    grades): mean(judge_all) + mean(human - judge_graded), classical PPI (no power tuning,
    lam = 1: PPI++'s tuned lam is undefined when the judge gives one grade to everything)."""
    import numpy as np
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, yhat, unlabeled = (np.asarray(v, dtype=float) for v in (human, judge_graded, judge_all))
    estimate = float(ppi_mean_pointestimate(y, yhat, unlabeled, lam=1)[0])
    if len(y) < 2:
        return estimate, None, None
    low, high = ppi_mean_ci(y, yhat, unlabeled, alpha=ALPHA, lam=1)
    return estimate, float(low[0]), float(high[0])


# --- per model ---------------------------------------------------------------------------------


def _judge_means(records: Sequence[ResultRecord], score: OpenScore) -> dict[str, float]:
    """question id -> the mean of its readable judge grades, for one model's run."""
    grades: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if (
            r.run_id == score.run_id
            and r.model == score.model
            and r.pass_index < score.gradings
            and r.score is not None
        ):
            grades[r.question_id].append(r.score)
    return {q: sum(v) / len(v) for q, v in grades.items()}


def _same_model(named: str, evaluated: str) -> bool:
    from benchfoundry.gateway.models import mask_spec_string

    return mask_spec_string(named) == evaluated or named == evaluated.split("@", 1)[0]


def _one(score: OpenScore, judge: dict[str, float], mine: list[tuple[str, HumanGrade]]) -> Debiased:
    by_answer: dict[str, list[float]] = defaultdict(list)
    for qid, g in mine:
        if qid in judge:
            by_answer[qid].append(g.grade)
    base = Debiased(
        model=score.model,
        with_image=score.with_image,
        judge=sum(judge.values()) / len(judge) if judge else None,
        answers=len(judge),
        human_graded=len(by_answer),
        graders=sorted({g.grader for q, g in mine if q in judge}),
    )
    if not by_answer:
        base.note = (
            f"{score.model}: no human grades of its judge-graded answers; its judge score is not "
            "corrected"
        )
        return base
    qids = sorted(by_answer)
    human = [sum(by_answer[q]) / len(by_answer[q]) for q in qids]
    judged = [judge[q] for q in qids]
    base.estimate, base.low, base.high = ppi_mean(human, judged, list(judge.values()))
    base.human_mean = sum(human) / len(human)
    base.judge_on_graded = sum(judged) / len(judged)
    if base.low is None:
        base.note = (
            f"{score.model}: 1 answer graded by people; an interval needs at least 2, so its "
            "debiased score has no interval"
        )
    return base


def debias(
    dataset: EvalDataset,
    records: Sequence[ResultRecord],
    scores: Sequence[OpenScore],
    grades: Sequence[HumanGrade],
    with_image: bool,
) -> tuple[list[Debiased], list[str]]:
    """Each model's score (in the evaluation's own image setting) corrected with the human
    grades of its answers, and notes on the grades that matched nothing."""
    from benchfoundry.gateway.models import mask_spec_string

    if not grades:
        return [], []
    ids: dict[str, str] = {}
    for q in dataset.open_questions:
        ids.setdefault(q.source_id, q.question_id)
        ids[q.question_id] = q.question_id
    own = [s for s in scores if s.with_image == with_image]
    unknown = sorted({g.question for g in grades if g.question not in ids})
    unmatched = sorted(
        {
            mask_spec_string(g.model)
            for g in grades
            if not any(_same_model(g.model, s.model) for s in own)
        }
    )
    out, skipped = [], 0
    for s in own:
        judge = _judge_means(records, s)
        mine = [
            (ids[g.question], g)
            for g in grades
            if g.question in ids and _same_model(g.model, s.model)
        ]
        skipped += sum(q not in judge for q, _ in mine)
        out.append(_one(s, judge, mine))
    notes = []
    if unknown:
        more = f", ... ({len(unknown)} in all)" if len(unknown) > SHOWN_ROWS else ""
        notes.append(
            "human grades of questions not in this evaluation, not used: "
            + ", ".join(unknown[:SHOWN_ROWS])
            + more
        )
    if unmatched:
        notes.append(f"human grades of models not evaluated here: {', '.join(unmatched)}")
    if skipped:
        notes.append(
            f"{skipped} human grades are of answers with no judge grade (not answered, or every "
            "grading failed) and are not used"
        )
    if any(s.with_image != with_image for s in scores):
        setting = "with" if with_image else "without"
        notes.append(f"human grades are taken as grades of the answers {setting} images only")
    return out, notes + [d.note for d in out if d.note]


# --- rendering ---------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _interval(d: Debiased) -> str:
    if d.estimate is None:
        return "not corrected"
    if d.low is None:
        return f"{d.estimate:.1%} (no interval)"
    return f"{d.estimate:.1%} [{d.low:.1%}, {d.high:.1%}]"


def text_lines(debiased: Sequence[Debiased], notes: Sequence[str]) -> list[str]:
    """The CLI's lines: each model's judge score beside its debiased one."""
    out = []
    for d in debiased:
        line = f"debiased by people's grades, {d.model}: {_interval(d)}, judge {_pct(d.judge)}"
        if d.estimate is not None:
            line += (
                f" ({d.human_graded} of {d.answers} answers graded by people: people "
                f"{_pct(d.human_mean)}, judge {_pct(d.judge_on_graded)} on them)"
            )
        out.append(line)
    return out + list(notes)


def markdown_lines(
    debiased: Sequence[Debiased], notes: Sequence[str], source: str | None
) -> list[str]:
    """The Markdown table of judge and debiased scores, and the notes."""
    if not debiased and not notes:
        return []
    lines = [
        "",
        "Judge scores corrected with people's grades (prediction-powered inference"
        + (f", `{source}`" if source else "")
        + "):",
        "",
        "| model | judge | answers graded by people | people on them | judge on them | "
        "debiased [95% CI] |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {d.model} | {_pct(d.judge)} | {d.human_graded} of {d.answers} | {_pct(d.human_mean)} | "
        f"{_pct(d.judge_on_graded)} | {_interval(d)} |"
        for d in debiased
    ]
    return lines + (["", *(f"- {n}" for n in notes)] if notes else [])
