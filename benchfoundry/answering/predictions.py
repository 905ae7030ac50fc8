"""Rescoring prediction files as VLMEvalKit writes them (xlsx, tsv, csv, parquet): extract each
row's choice, then vanilla and CircularEval accuracy overall and per category. Circular copies of
a question carry indices offset by multiples of 1,000,000 and share `index % 1,000,000`."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, TypeAdapter

from benchfoundry.answering.judge import ToExtract, extract_all
from benchfoundry.core.errors import UserError
from benchfoundry.core.letters import LETTERS
from benchfoundry.gateway import Gateway

CIRCULAR_OFFSET = 1_000_000
REQUIRED = ("index", "question", "answer", "prediction", "A", "B")


class PredictionFileError(UserError, ValueError):
    """A prediction file that cannot be read or lacks a required column."""


class RowResult(BaseModel):
    index: int
    question: str
    answer: str
    prediction: str
    extracted: str
    extracted_by: str
    hit: bool
    reason: str
    category: str | None
    l2_category: str | None


_ROWS = TypeAdapter(list[RowResult])


class Scores(BaseModel):
    rows: int
    questions: int
    vanilla_accuracy: float
    circular_accuracy: float | None
    extracted_by: dict[str, int]
    by_category: dict[str, dict[str, float]]


def read_predictions(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".xlsx":
            frame = pd.read_excel(path, dtype=object)
        elif suffix in (".tsv", ".csv"):
            frame = pd.read_csv(
                path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False
            )
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            raise PredictionFileError(f"{path}: give an .xlsx, .tsv, .csv or .parquet file")
    except (OSError, ValueError) as exc:
        if isinstance(exc, PredictionFileError):
            raise
        raise PredictionFileError(f"cannot read {path}: {exc}") from None
    for column in REQUIRED:
        if column not in frame.columns:
            raise PredictionFileError(
                f"{path}: required column '{column}' is missing (found: {', '.join(map(str, frame.columns))})"
            )
    return frame


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return str(value).strip()


def _texts(frame: pd.DataFrame, column: str) -> list[str]:
    """A column's values as `_text` reads them (all empty where the column is missing)."""
    if column not in frame.columns:
        return [""] * len(frame)
    return [v.strip() if type(v) is str else _text(v) for v in frame[column].tolist()]


def _index(value: object) -> int:
    if type(value) is int and -(2**53) <= value <= 2**53:  # what int(float(str(value))) gives
        return value
    return int(float(_text(value)))


def score_predictions(
    frame: pd.DataFrame, gateway: Gateway | None = None, judge: str | None = None
) -> tuple[list[RowResult], Scores]:
    """Extract every row's choice (heuristic, then the judge for undecided rows when given)."""
    # Column by column: each column is read once, not once per row.
    present = [L for L in LETTERS if L in frame.columns]
    letter_columns = [_texts(frame, L) for L in present]
    options = []
    for filled in zip(*letter_columns, strict=True) if present else ((),) * len(frame):
        end = len(filled)
        while end and not filled[end - 1]:
            end -= 1
        options.append(tuple(filled[:end]))
    questions = _texts(frame, "question")
    predictions = _texts(frame, "prediction")
    extractions = extract_all(
        [ToExtract(q, o, p) for q, o, p in zip(questions, options, predictions, strict=True)],
        gateway,
        judge,
    )
    l2 = "l2-category" if "l2-category" in frame.columns else "l2_category"
    # Validated as one list: a third faster than a RowResult(...) call per row.
    rows = _ROWS.validate_python(
        [
            {
                "index": _index(index),
                "question": question,
                "answer": answer,
                "prediction": prediction,
                "extracted": extraction.letter or "Z",
                "extracted_by": extraction.by,
                "hit": extraction.letter == answer,
                "reason": extraction.reason,
                "category": category or None,
                "l2_category": l2_category or None,
            }
            for index, question, answer, prediction, extraction, category, l2_category in zip(
                frame["index"].tolist(),
                questions,
                [a.upper() for a in _texts(frame, "answer")],
                predictions,
                extractions,
                _texts(frame, "category"),
                _texts(frame, l2),
                strict=True,
            )
        ]
    )
    return rows, summarise(rows)


def summarise(rows: list[RowResult]) -> Scores:
    groups: dict[int, list[RowResult]] = defaultdict(list)
    for row in rows:
        groups[row.index % CIRCULAR_OFFSET].append(row)
    circular = any(len(g) > 1 for g in groups.values())
    main = {}  # each question's main row: its first below the offset, else its first
    for key, group in groups.items():
        first = group[0]
        if first.index >= CIRCULAR_OFFSET:
            first = next((r for r in group if r.index < CIRCULAR_OFFSET), first)
        main[key] = first
    all_hit = {k: all(r.hit for r in g) for k, g in groups.items()} if circular else {}
    keys_by_category: dict[str, list[int]] = defaultdict(list)
    for key, row in main.items():
        keys_by_category[row.category or "uncategorised"].append(key)
    by_category: dict[str, dict[str, float]] = {}
    for category in sorted(keys_by_category):
        keys = keys_by_category[category]
        by_category[category] = {
            "questions": len(keys),
            "vanilla": sum(main[k].hit for k in keys) / len(keys),
        }
        if circular:
            by_category[category]["circular"] = sum(all_hit[k] for k in keys) / len(keys)
    n = max(1, len(groups))
    return Scores(
        rows=len(rows),
        questions=len(groups),
        vanilla_accuracy=sum(r.hit for r in main.values()) / n,
        circular_accuracy=sum(all_hit.values()) / n if circular else None,
        extracted_by=dict(Counter(row.extracted_by for row in rows)),
        by_category=by_category,
    )


def write_rows(rows: list[RowResult], path: str | Path) -> None:
    """One row per input row: index, extracted, extracted_by, hit and the rest (by extension)."""
    path = Path(path)
    frame = pd.DataFrame([r.model_dump() for r in rows])
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    elif suffix in (".tsv", ".csv"):
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    else:
        raise PredictionFileError(f"--out {path}: give a .parquet, .tsv or .csv file")
