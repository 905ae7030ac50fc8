"""Rescoring prediction files as VLMEvalKit writes them (xlsx, tsv, csv, parquet): extract each
row's choice, then vanilla and CircularEval accuracy overall and per category. Circular copies of
a question carry indices offset by multiples of 1,000,000 and share `index % 1,000,000`."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pandas as pd
from pydantic import BaseModel

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


def score_predictions(
    frame: pd.DataFrame, gateway: Gateway | None = None, judge: str | None = None
) -> tuple[list[RowResult], Scores]:
    """Extract every row's choice (heuristic, then the judge for undecided rows when given)."""
    # Column by column: each option letter is looked up once, not once per row.
    records = frame.to_dict("records")
    present = [L for L in LETTERS if L in frame.columns]
    letter_columns = [[_text(v) for v in frame[L].tolist()] for L in present]
    options = []
    for filled in zip(*letter_columns, strict=True) if present else ((),) * len(records):
        end = len(filled)
        while end and not filled[end - 1]:
            end -= 1
        options.append(tuple(filled[:end]))
    extractions = extract_all(
        [
            ToExtract(_text(r["question"]), o, _text(r["prediction"]))
            for r, o in zip(records, options, strict=True)
        ],
        gateway,
        judge,
    )
    rows = []
    for row, extraction in zip(records, extractions, strict=True):
        answer = _text(row["answer"]).upper()
        category = _text(row.get("category")) or None
        rows.append(
            RowResult(
                index=int(float(_text(row["index"]))),
                question=_text(row["question"]),
                answer=answer,
                prediction=_text(row["prediction"]),
                extracted=extraction.letter or "Z",
                extracted_by=extraction.by,
                hit=extraction.letter == answer,
                reason=extraction.reason,
                category=category,
                l2_category=_text(row.get("l2-category", row.get("l2_category"))) or None,
            )
        )
    return rows, summarise(rows)


def summarise(rows: list[RowResult]) -> Scores:
    groups: dict[int, list[RowResult]] = defaultdict(list)
    for row in rows:
        groups[row.index % CIRCULAR_OFFSET].append(row)
    circular = any(len(g) > 1 for g in groups.values())
    main = {
        key: next((r for r in group if r.index < CIRCULAR_OFFSET), group[0])
        for key, group in groups.items()
    }
    by_category: dict[str, dict[str, float]] = {}
    for category in sorted({r.category or "uncategorised" for r in main.values()}):
        keys = [k for k, r in main.items() if (r.category or "uncategorised") == category]
        by_category[category] = {
            "questions": len(keys),
            "vanilla": sum(main[k].hit for k in keys) / len(keys),
        }
        if circular:
            by_category[category]["circular"] = sum(
                all(r.hit for r in groups[k]) for k in keys
            ) / len(keys)
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row.extracted_by] += 1
    n = max(1, len(groups))
    return Scores(
        rows=len(rows),
        questions=len(groups),
        vanilla_accuracy=sum(r.hit for r in main.values()) / n,
        circular_accuracy=sum(all(r.hit for r in g) for g in groups.values()) / n
        if circular
        else None,
        extracted_by=dict(counts),
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
