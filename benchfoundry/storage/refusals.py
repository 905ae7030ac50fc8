"""Stored candidates that a stage refused, as the quarantine table records them: rows whose
`ref_kind` is `candidate`, with the question id in `ref_id` and its dimension. The one place that
writes and reads that reference, so that quality control needs nothing from the generate stage's
module."""

from __future__ import annotations

from benchfoundry.core.records import QuarantineRecord
from benchfoundry.storage.tables import RunFolder

PREFIX = "candidate:"


def candidate_ref(question_id: str, dimension: str) -> dict[str, str]:
    """The quarantine reference of a refused stored candidate: its readable `source` and its
    structured columns, as `Rejection` keywords."""
    return {
        "source": f"{PREFIX}{question_id}#{dimension}",
        "ref_kind": "candidate",
        "ref_id": question_id,
        "dimension": dimension,
    }


def refused_candidates(run: RunFolder, stage: str = "generate") -> dict[str, tuple[str, str]]:
    """question_id -> (reason, detail) of each stored candidate `stage` refused."""
    rows = run.table(QuarantineRecord).read(
        columns=["stage", "ref_kind", "ref_id", "reason", "detail"]
    )
    return {
        row["ref_id"]: (row["reason"], row["detail"])
        for row in rows.to_pylist()
        if row["stage"] == stage and row["ref_kind"] == "candidate"
    }
