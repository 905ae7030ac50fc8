"""The item-level response matrix of evaluation runs: every stored pass of every model on every
question (its response, the choice read from it, whether it is correct, its grade on an
open-ended set) as one Parquet file, so that other tools can re-score or analyse items without
reading run folders. Only the passes of the evaluations the report shows are written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from benchfoundry.core.records import ResultRecord, arrow_schema
from benchfoundry.storage.atomic import atomic_write_table
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.summary import EvaluateSummary

COLUMNS = (
    "run_id",
    "model",
    "question_id",
    "pass_index",
    "option_order",
    "response",
    "extracted",
    "extracted_by",
    "correct",
    "score",
)
FILE = "responses.parquet"


def write_responses(summaries: Sequence[EvaluateSummary], path: Path) -> int:
    """Write the passes of the evaluations in `summaries` to `path`; returns the rows."""
    wanted: dict[str, set[str]] = {}
    for s in summaries:
        ids = {score.run_id for score in s.scores} | {o.run_id for o in s.open_scores}
        wanted.setdefault(s.run, set()).update(ids)
    results = arrow_schema(ResultRecord)
    out_schema = pa.schema(
        [pa.field("run", pa.string(), nullable=False), *(results.field(c) for c in COLUMNS)]
    )
    tables = []
    for run, ids in wanted.items():
        table = RunFolder(run).table(ResultRecord)
        if not table.exists() or not ids:
            continue
        rows = table.read(columns=list(COLUMNS))
        rows = rows.filter(pc.is_in(rows["run_id"], value_set=pa.array(sorted(ids))))
        column = pa.array([run] * rows.num_rows, pa.string())
        tables.append(rows.add_column(0, out_schema.field("run"), column).cast(out_schema))
    matrix = pa.concat_tables(tables) if tables else out_schema.empty_table()
    atomic_write_table(path, matrix)
    return matrix.num_rows
