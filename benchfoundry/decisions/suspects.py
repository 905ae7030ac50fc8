"""Items the item analysis found suspect (`benchfoundry report` writes them to `items.parquet`:
discrimination near zero or negative, the mark of a wrong key, an ambiguous question or a broken
image), read back for the people who look at them again (`review export --suspects`) and for
the next release's card (what became of them). Shared by review and publish, below both.
A suspect goes back as its `review_item`: the English item for a key suspect, the twin
(`<question_id>@<language>`) for a translation suspect, whose English item is fine."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow.parquet as pq

from benchfoundry.core.errors import UserError
from benchfoundry.core.records import ReviewRecord
from benchfoundry.decisions.outcomes import latest, outcome

FILE = "items.parquet"  # in the report's folder (RUN/reports/ or RUN/reports/evaluation/)


def default_items(run_root: str | Path) -> Path:
    """The item analysis read by default: `benchfoundry report`'s of several runs
    (RUN/reports/items.parquet), else the one evaluate and a one-run report write
    (RUN/reports/evaluation/items.parquet)."""
    reports = Path(run_root) / "reports"
    combined = reports / FILE
    return combined if combined.is_file() else reports / "evaluation" / FILE


class SuspectsError(UserError, ValueError):
    """An items file that cannot be read."""


def _to_review(rows: Iterable[dict]) -> dict[str, dict]:
    """review item -> the first suspect row sent there: a key suspect goes back as its English
    item, a translation suspect as its twin (`<question_id>@<language>`). A file written before
    the analysis was made per language has no `review_item`: its rows are English items."""
    out: dict[str, dict] = {}
    for row in rows:
        if row["suspect"]:
            out.setdefault(row.get("review_item") or row["question_id"], row)
    return out


def read_suspects(path: Path | str) -> dict[str, str]:
    """review item (an English item's question id, or a twin's `<question_id>@<language>`)
    -> why, for the suspect items of an `items.parquet`."""
    path = Path(path)
    if not path.is_file():
        raise SuspectsError(
            f"{path} does not exist: run benchfoundry report on the release's evaluations first "
            "(it writes items.parquet beside the leaderboard)"
        )
    try:
        schema = pq.read_schema(path)
        columns = ["question_id", "suspect", "why"]
        columns += [c for c in ("review_item",) if c in schema.names]
        table = pq.read_table(path, columns=columns)
    except (OSError, KeyError, ValueError) as exc:
        raise SuspectsError(f"{path} is not an item analysis (items.parquet): {exc}") from None
    return {item: row["why"] for item, row in _to_review(table.to_pylist()).items()}


def since_analysis(path: Path | str, reviews: Iterable[ReviewRecord]) -> list[str]:
    """Lines for a release's card: how many items the item analysis at `path` found suspect,
    and what people decided on them since (their decisions made after the analysis)."""
    path = Path(path)
    if not path.is_file():
        return []
    table = pq.read_table(path)
    if "analysed_at" not in table.column_names or table.num_rows == 0:
        return []
    sent = _to_review(table.to_pylist())
    first = table.slice(0, 1).to_pylist()[0]
    label = f"{first['dataset']} {first['version'] or ''}".strip()
    when = min(r["analysed_at"] for r in table.to_pylist())
    if not sent:
        return [f"item analysis of {label} ({when[:10]}): no suspect item"]
    wanted = set(sent)
    later = latest(r for r in reviews if r.question_id in wanted and r.decided_at > when)
    counts = {"kept": 0, "fixed": 0, "dropped": 0, "in conflict": 0, "awaiting review": 0}
    for qid in wanted:
        state, decision = outcome(later.get(qid, {}))
        if state == "conflict":
            counts["in conflict"] += 1
        elif state in ("decided", "agreed", "adjudicated") and decision is not None:
            counts[FATES.get(decision.decision, "fixed")] += 1
        else:  # undecided, or only the automatic reviewer: no person has looked again
            counts["awaiting review"] += 1
    told = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    translations = sum(r.get("suspect_kind") == "translation" for r in sent.values())
    of_them = f", {translations} of them translations" if translations else ""
    return [
        f"item analysis of {label} ({when[:10]}): {len(wanted)} suspect items (discrimination "
        f"near zero or negative{of_them}); since then, by people: {told}"
    ]


FATES = {
    "accept": "kept",
    "reject": "dropped",
    "fix_answer": "fixed",
    "edit": "fixed",
    "move": "fixed",
}
