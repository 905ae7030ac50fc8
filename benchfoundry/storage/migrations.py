"""One-time upgrades of run folders written by earlier versions, done when a table is first
opened: each part whose columns are an earlier layout is rewritten (atomically, under the same
name, so its keys and the table's other parts are untouched) in today's layout, and the run
manifest's `migrations` section says what was upgraded and when.

Layout 1 (up to 2026-12-01) packed data into strings: `meta` was JSON text (a candidate's
`flags` and `cost` inside it), a quarantine row's reference was only its `source` text
(`candidate:<question_id>#<dimension>`, `image:<image_id>#<dimension>`), a judgement's error was
`"kind: message"`, and judgements and captions recorded no prompt id; results had no grader
columns (`grader_reply`, `grade_error`: empty for a multiple-choice answer); review decisions had
no `role` (added empty: decisions made before user accounts). Decisions and review batches
had no `language` (added empty: English items, before twins were reviewed). Candidates had no
`slots` and `option_slots`, segments no `placeholders` and `noun` (added empty: written before
a template's parts and an annotation's parts were kept). Images and their origins had no
`original_sha256` and images no `normalised` (added empty: stored as given, before ingest showed
every image as a viewer does).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchfoundry.core.reasons import default_ref_kind
from benchfoundry.storage.atomic import atomic_write_json, atomic_write_table

Row = dict[str, Any]
_ERROR = re.compile(r"^([a-z_]+): (.*)$", re.DOTALL)


def _text_map(value: Any) -> dict[str, str]:
    loaded = json.loads(value) if isinstance(value, str) and value else (value or {})
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in sorted(loaded.items())}


def _meta_row(row: Row) -> Row:
    return {**row, "meta": _text_map(row.get("meta"))}


def _image(row: Row) -> Row:
    """Images stored before ingest normalised them: their bytes were stored as given."""
    return {**_meta_row(row), "normalised": row.get("normalised") or []}


def _candidate(row: Row) -> Row:
    parts = {"slots": row.get("slots") or {}, "option_slots": row.get("option_slots") or []}
    if not isinstance(row.get("meta"), str):  # layout 2, before a template's parts were kept
        return {**row, **parts}
    meta = json.loads(row["meta"]) if row["meta"] else {}
    flags, cost = [], 0.0
    if not str(row.get("generator", "")).startswith("seed:"):  # a generated draft's own fields
        flags = list(meta.pop("flags", []))
        cost = float(meta.pop("cost", 0.0))
    return {**row, "meta": _text_map(meta), "flags": flags, "cost": cost, **parts}


def _segment(row: Row) -> Row:
    return {**row, "placeholders": row.get("placeholders") or [], "noun": row.get("noun")}


def _quarantine(row: Row) -> Row:
    source = row["source"]
    ref_kind, ref_id, dimension = default_ref_kind(row["source_kind"]), None, None
    if source.startswith(("candidate:", "image:")) and "#" in source:
        prefix, rest = source.split(":", 1)
        ref_id, dimension = rest.split("#", 1)
        ref_kind = "candidate" if prefix == "candidate" else "draft"
    elif ref_kind == "row" and "#" in source:
        ref_id = source.rsplit("#", 1)[1]
    return {**row, "ref_kind": ref_kind, "ref_id": ref_id, "dimension": dimension}


def _judgement(row: Row) -> Row:
    error, kind = row.get("error"), None
    if error and (match := _ERROR.match(error)):
        kind, error = match.group(1), match.group(2)
    return {**row, "error_kind": kind, "error": error, "prompt_id": None, "prompt_hash": None}


def _facts(row: Row) -> Row:
    captions = [{"prompt_id": None, "prompt_hash": None, **c} for c in row.get("captions") or []]
    return {**row, "captions": captions}


UPGRADES: dict[str, Callable[[Row], Row]] = {
    "images": _image,
    "image_sources": _meta_row,
    "candidates": _candidate,
    "segments": _segment,  # the label's parts added empty: read before they were kept
    "quarantine": _quarantine,
    "judgements": _judgement,
    "visual_facts": _facts,
    "results": dict,  # the grader columns are added empty
    "reviews": dict,  # role and language added empty (decisions before accounts and twins)
    "review_batches": dict,  # language added empty: batches of English items
}


def upgrade_part(table: str, part: Path, schema: pa.Schema) -> bool:
    """Rewrite one part of `table` in today's layout; False when no upgrade applies (the reader
    then names the column that differs)."""
    upgrade = UPGRADES.get(table)
    if upgrade is None:
        return False
    rows = [upgrade(row) for row in pq.read_table(part).to_pylist()]
    rows = [{name: row.get(name) for name in schema.names} for row in rows]
    try:
        upgraded = pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return False
    atomic_write_table(part, upgraded)
    _record(part.parent.parent, table, part.name, len(rows))
    return True


def _record(root: Path, table: str, part: str, rows: int) -> None:
    manifest_path = root / "manifest.json"
    manifest = (
        json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    )
    manifest.setdefault("migrations", []).append(
        {
            "table": table,
            "part": part,
            "rows": rows,
            "to_layout": 2,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )
    atomic_write_json(manifest_path, manifest)
