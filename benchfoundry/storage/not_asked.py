"""The pictures a build asked nothing at all, and why: read from the `not_asked` table that
generate writes, for `benchfoundry status` and the review desk."""

from __future__ import annotations

from benchfoundry.core.records import CandidateRecord, NotAskedRecord
from benchfoundry.storage.tables import RunFolder


def asked_nothing(run: RunFolder) -> dict[str, list[str]]:
    """Each picture that got no question, by its origin as ingested, with the distinct reasons
    its template kinds gave (docs/generate.md lists them); empty before generate ran."""
    table = run.table(NotAskedRecord)
    if not table.exists():
        return {}
    rows = table.read(columns=["image_id", "source", "reason"]).to_pylist()
    asked = set(run.table(CandidateRecord).read(columns=["image_id"]).column(0).to_pylist())
    found: dict[str, set[str]] = {}
    for row in rows:
        if row["image_id"] not in asked:
            found.setdefault(row["source"] or row["image_id"], set()).add(row["reason"])
    return {source: sorted(reasons) for source, reasons in sorted(found.items())}
