"""Stored candidates that a stage refused, as the quarantine table records them: the row's
`source` is `candidate:<question_id>#<dimension>`. The one place that writes and reads that
reference, so that quality control needs nothing from the generate stage's module."""

from __future__ import annotations

from benchfoundry.records import QuarantineRecord
from benchfoundry.storage import RunFolder

PREFIX = "candidate:"


def candidate_ref(question_id: str, dimension: str) -> str:
    """The quarantine `source` of a refused stored candidate."""
    return f"{PREFIX}{question_id}#{dimension}"


def refused_candidates(run: RunFolder, stage: str = "generate") -> dict[str, tuple[str, str]]:
    """question_id -> (reason, detail) of each stored candidate `stage` refused."""
    rows = run.table(QuarantineRecord).read(columns=["stage", "source", "reason", "detail"])
    return {
        row["source"].removeprefix(PREFIX).split("#", 1)[0]: (row["reason"], row["detail"])
        for row in rows.to_pylist()
        if row["stage"] == stage and row["source"].startswith(PREFIX)
    }
