"""Rescoring prediction files as VLMEvalKit writes them (xlsx, tsv, csv, parquet): extract each
row's choice, then vanilla and CircularEval accuracy overall and per category. Circular copies of
a question carry indices offset by multiples of 1,000,000 and share `index % 1,000,000`."""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from benchfoundry.answering.choice_batch import POOL, byte_lengths, read_many, text_offsets
from benchfoundry.answering.judge import ToExtract, judge_undecided
from benchfoundry.core.errors import UserError
from benchfoundry.core.letters import LETTERS
from benchfoundry.gateway import Gateway

CIRCULAR_OFFSET = 1_000_000
REQUIRED = ("index", "question", "answer", "prediction", "A", "B")


class PredictionFileError(UserError, ValueError):
    """A prediction file that cannot be read or lacks a required column."""


class RowResult(NamedTuple):
    """One scored row (a named tuple: rows are made only when read, from `ScoredRows`' columns)."""

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


ROW_SCHEMA = pa.schema(
    [
        pa.field("index", pa.int64(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
        pa.field("answer", pa.string(), nullable=False),
        pa.field("prediction", pa.string(), nullable=False),
        pa.field("extracted", pa.string(), nullable=False),
        pa.field("extracted_by", pa.string(), nullable=False),
        pa.field("hit", pa.bool_(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("l2_category", pa.string()),
    ]
)
assert ROW_SCHEMA.names == list(RowResult._fields)


@dataclass(frozen=True)
class ScoredRows:
    """The scored rows, column by column: a table of `ROW_SCHEMA`, its types checked once for
    the whole column instead of once per row. Iterating gives `RowResult`s."""

    table: pa.Table

    def __post_init__(self) -> None:
        if not self.table.schema.equals(ROW_SCHEMA):
            raise TypeError(
                f"scored rows must have the schema {ROW_SCHEMA}, not {self.table.schema}"
            )

    def __len__(self) -> int:
        return self.table.num_rows

    def __iter__(self) -> Iterator[RowResult]:
        return map(RowResult._make, zip(*(c.to_pylist() for c in self.table.columns), strict=True))

    def __getitem__(self, row: int) -> RowResult:
        return RowResult._make(c[row].as_py() for c in self.table.columns)

    def to_frame(self) -> pd.DataFrame:
        return self.table.to_pandas()


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


# What `str.strip()` removes (every character whose `isspace()` is true), for Arrow's trim.
_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _texts(frame: pd.DataFrame, column: str) -> pa.Array:
    """A column's values as `_text` reads them, as one Arrow string array (all empty where the
    column is missing): a column of strings is trimmed by Arrow in one call, others value by
    value."""
    if column not in frame.columns:
        return pa.array([""] * len(frame), pa.string(), memory_pool=POOL)
    values = frame[column]
    array = None
    if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
        try:
            array = pa.array(values, from_pandas=True, memory_pool=POOL)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            array = None
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks(memory_pool=POOL)
    if array is None or not (
        pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
    ):
        return pa.array([_text(v) for v in values.tolist()], pa.string(), memory_pool=POOL)
    if array.type != pa.string():
        array = _narrowed(array)
    if array.null_count:
        array = pc.coalesce(array, "", memory_pool=POOL)
    if not _may_need_trim(array):
        return array
    return pc.utf8_trim(array, characters=_WHITESPACE, memory_pool=POOL)


def _narrowed(array: pa.Array) -> pa.Array:
    """A `large_string` array (pandas' own string columns) as `string`, its bytes shared and its
    offsets narrowed by numpy (Arrow's cast kernels cost a millisecond the first time a process
    calls one)."""
    validity, offsets, data = array.buffers()
    wide = np.frombuffer(offsets, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    if len(wide) == 0 or wide[-1] >= 2**31:
        return pc.cast(array, pa.string(), memory_pool=POOL)
    if validity is not None and array.offset:  # a sliced bitmap: leave it to Arrow
        return pc.cast(array, pa.string(), memory_pool=POOL)
    narrow = np.empty(len(wide), dtype=np.int32)  # no wide copy made on the way
    np.subtract(wide, wide[0], out=narrow, casting="unsafe")
    narrow = pa.py_buffer(narrow)
    held = (
        data.slice(int(wide[0]), int(wide[-1] - wide[0])) if data is not None else pa.py_buffer(b"")
    )
    return pa.Array.from_buffers(
        pa.string(), len(array), [validity, narrow, held], null_count=array.null_count
    )


# The bytes a string that `str.strip()` changes begins with (the first bytes of the white space
# characters in UTF-8) and ends with (their last bytes).
_FIRST_BYTES = np.zeros(256, dtype=bool)
_FIRST_BYTES[[c.encode()[0] for c in _WHITESPACE]] = True
_LAST_BYTES = np.zeros(256, dtype=bool)
_LAST_BYTES[[c.encode()[-1] for c in _WHITESPACE]] = True


def _may_need_trim(texts: pa.Array) -> bool:
    """False where no text of a string array (no nulls) begins with a byte that begins white
    space or ends with one that ends it, so that trimming would change none (numpy's reading
    of its bytes; `utf8_trim` copies every text, and costs more on its first call)."""
    data = texts.buffers()[2]
    if data is None or len(texts) == 0:
        return False
    ends = text_offsets(texts)
    held = np.frombuffer(data, dtype=np.uint8)
    if held.size == 0:
        return False
    # An empty text's first and last bytes taken here are its neighbours': at worst a trim that
    # changes nothing. The empty texts at the end, which begin past the bytes, are left out.
    # (Indexing, not `take`, which would copy the offsets as 64-bit numbers first.)
    starts = ends[: int(np.searchsorted(ends[:-1], ends.dtype.type(held.size)))]  # (no cast)
    if _FIRST_BYTES[held[starts]].any():
        return True
    return bool(_LAST_BYTES[held[ends[1:] - 1]].any())  # (-1, for empty first ones: the last)


def _index(value: object) -> int:
    if type(value) is int and -(2**53) <= value <= 2**53:  # what int(float(str(value))) gives
        return value
    return int(float(_text(value)))


def _indices(frame: pd.DataFrame) -> pa.Array:
    """The `index` column as integers (`_index` of each value; a column of integers at once)."""
    values = frame["index"]
    if pd.api.types.is_integer_dtype(values.dtype) and not values.hasnans:
        numbers = values.to_numpy(dtype=np.int64)
        if len(numbers) == 0 or np.abs(numbers).max() <= 2**53:
            return pa.array(numbers, pa.int64(), memory_pool=POOL)
    return pa.array([_index(v) for v in values.tolist()], pa.int64(), memory_pool=POOL)


def _upper(texts: pa.Array) -> pa.Array:
    """`str.upper()` of each text (Arrow's for ASCII, which is the same there)."""
    if _all_ascii(texts):
        return pc.ascii_upper(texts, memory_pool=POOL)
    return pa.array([t.upper() for t in texts.to_pylist()], pa.string(), memory_pool=POOL)


def _all_ascii(texts: pa.Array) -> bool:
    """Whether every text of a string array is ASCII, from the bytes it holds at once (numpy's
    maximum: Arrow's `string_is_ascii` and its first aggregate cost milliseconds the first time
    a process calls them, more than a file's answers take to read)."""
    data = texts.buffers()[2]
    if data is None or len(texts) == 0:
        return True
    ends = text_offsets(texts)
    held = np.frombuffer(data, dtype=np.uint8)[ends[0] : ends[-1]]
    return held.size == 0 or int(held.max()) < 128


def _categories(frame: pd.DataFrame, column: str) -> pa.Array:
    """A category column as `_text` reads it, an empty one as null (all null where missing)."""
    if column not in frame.columns:
        return pa.nulls(len(frame), pa.string(), memory_pool=POOL)
    texts = _texts(frame, column)
    named = pc.not_equal(texts, "", memory_pool=POOL)
    return pc.if_else(named, texts, pa.scalar(None, pa.string()), memory_pool=POOL)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a file's rows are read: the objects made per row would
    set off passes over every object of the process, at times half of the scoring time, and
    none of them makes a cycle."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def score_predictions(
    frame: pd.DataFrame, gateway: Gateway | None = None, judge: str | None = None
) -> tuple[ScoredRows, Scores]:
    """Extract every row's choice (heuristic, then the judge for undecided rows when given)."""
    with _collector_paused():
        rows = _score_rows(frame, gateway, judge)
        return rows, summarise(rows)


def _score_rows(frame: pd.DataFrame, gateway: Gateway | None, judge: str | None) -> ScoredRows:
    # Column by column: each column is read once, not once per row, and a row's options only
    # where its letters decide nothing.
    present = [L for L in LETTERS if L in frame.columns]
    option_columns = [_texts(frame, L) for L in present]
    filled = np.zeros(len(frame), dtype=np.int64)  # a row's options end at its last filled one
    for number, column in enumerate(option_columns, 1):
        filled[byte_lengths(column) > 0] = number
    counts = filled

    def options_of(rows: list[int]) -> list[tuple[str, ...]]:
        if not present:
            return [()] * len(rows)
        taken = pa.array(rows, pa.int64(), memory_pool=POOL)
        texts = zip(
            *(pc.take(c, taken, memory_pool=POOL).to_pylist() for c in option_columns),
            strict=True,
        )
        return [t[: counts[r]] for r, t in zip(rows, texts, strict=True)]

    questions = _texts(frame, "question")
    predictions = _texts(frame, "prediction")

    def item_at(row: int) -> ToExtract:
        return ToExtract(questions[row].as_py(), options_of([row])[0], predictions[row].as_py())

    readings, at = read_many(predictions, counts, options_of, option_columns)
    if judge is not None and gateway is not None:  # the judge reads undecided rows one by one
        readings, at = list(map(readings.__getitem__, at.tolist())), np.arange(len(frame))
        readings = judge_undecided(readings, item_at, gateway, judge)
    else:  # an undecided reading is the same for all its rows
        readings = judge_undecided(readings)
    # Each column made once per distinct reading, then taken for every row.
    taken = pa.array(at, pa.int64(), memory_pool=POOL)
    letters, by, reasons = zip(*readings, strict=True) if readings else ((), (), ())
    extracted = pc.take(
        pc.coalesce(pa.array(letters, pa.string(), memory_pool=POOL), "Z", memory_pool=POOL),
        taken,
        memory_pool=POOL,
    )
    answers = _upper(_texts(frame, "answer"))
    l2 = "l2-category" if "l2-category" in frame.columns else "l2_category"
    columns = [
        _indices(frame),
        questions,
        answers,
        predictions,
        extracted,
        pc.take(pa.array(by, pa.string(), memory_pool=POOL), taken, memory_pool=POOL),
        pc.equal(extracted, answers, memory_pool=POOL),
        pc.take(pa.array(reasons, pa.string(), memory_pool=POOL), taken, memory_pool=POOL),
        _categories(frame, "category"),
        _categories(frame, l2),
    ]
    return ScoredRows(pa.Table.from_arrays(columns, schema=ROW_SCHEMA))


def summarise(rows: ScoredRows) -> Scores:
    """Vanilla and CircularEval accuracy, overall and per category, and who extracted the rows."""
    table = rows.table
    index = table["index"].to_numpy()
    keys = index % CIRCULAR_OFFSET
    counted = pc.value_counts(table["extracted_by"], memory_pool=POOL)  # in the order first seen
    extracted_by = dict(
        zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True)
    )
    ordered = len(keys) < 2 or bool((keys[1:] > keys[:-1]).all())
    if not (ordered or len(np.unique(keys)) == len(keys)):  # questions with several rows
        return _summarise_groups(
            keys.tolist(),
            index.tolist(),
            table["hit"].to_pylist(),
            table["category"].to_pylist(),
            len(rows),
            extracted_by,
        )
    # One row per question (no circular copies): each row is its question's main row.
    hits = table["hit"].to_numpy(zero_copy_only=False)
    # A missing category (null) counts as "uncategorised": encoded as a value of its own, not
    # filled in first (a text made per row, for a file without categories all of them).
    categories = pc.dictionary_encode(
        table["category"].combine_chunks(memory_pool=POOL),
        null_encoding="encode",
        memory_pool=POOL,
    )
    codes = categories.indices.to_numpy(zero_copy_only=False)
    names = [name or "uncategorised" for name in categories.dictionary.to_pylist()]
    questions = np.bincount(codes, minlength=len(names)).tolist()
    right = np.bincount(codes, weights=hits, minlength=len(names)).tolist()
    totals: dict[str, list[int]] = {}  # (a null and a real "uncategorised" are one)
    for name, asked, hit in zip(names, questions, right, strict=True):
        total = totals.setdefault(name, [0, 0])
        total[0] += asked
        total[1] += int(hit)
    by_category = {
        name: {"questions": asked, "vanilla": hit / asked}
        for name, (asked, hit) in sorted(totals.items())
    }
    return Scores(
        rows=len(rows),
        questions=len(keys),
        vanilla_accuracy=int(hits.sum()) / max(1, len(keys)),
        circular_accuracy=None,
        extracted_by=extracted_by,
        by_category=by_category,
    )


def _summarise_groups(
    keys: list[int],
    index: list[int],
    hits: list[bool],
    categories: list[str | None],
    count: int,
    extracted_by: dict[str, int],
) -> Scores:
    """`summarise` where rows share a question (circular copies, repeated indices)."""
    groups: dict[int, list[int]] = defaultdict(list)  # question: its rows
    for row, key in enumerate(keys):
        groups[key].append(row)
    circular = any(len(g) > 1 for g in groups.values())
    main = {}  # each question's main row: its first below the offset, else its first
    for key, group in groups.items():
        first = group[0]
        if index[first] >= CIRCULAR_OFFSET:
            first = next((r for r in group if index[r] < CIRCULAR_OFFSET), first)
        main[key] = first
    all_hit = {k: all(hits[r] for r in g) for k, g in groups.items()} if circular else {}
    keys_by_category: dict[str, list[int]] = defaultdict(list)
    for key, row in main.items():
        keys_by_category[categories[row] or "uncategorised"].append(key)
    by_category: dict[str, dict[str, float]] = {}
    for category in sorted(keys_by_category):
        members = keys_by_category[category]
        by_category[category] = {
            "questions": len(members),
            "vanilla": sum(hits[main[k]] for k in members) / len(members),
        }
        if circular:
            by_category[category]["circular"] = sum(all_hit[k] for k in members) / len(members)
    n = max(1, len(groups))
    return Scores(
        rows=count,
        questions=len(groups),
        vanilla_accuracy=sum(hits[r] for r in main.values()) / n,
        circular_accuracy=sum(all_hit.values()) / n if circular else None,
        extracted_by=extracted_by,
        by_category=by_category,
    )


def write_rows(rows: ScoredRows, path: str | Path) -> None:
    """One row per input row: index, extracted, extracted_by, hit and the rest (by extension)."""
    path = Path(path)
    frame = rows.to_frame()
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    elif suffix in (".tsv", ".csv"):
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    else:
        raise PredictionFileError(f"--out {path}: give a .parquet, .tsv or .csv file")
