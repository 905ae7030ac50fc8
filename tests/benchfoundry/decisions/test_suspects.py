"""Suspect items read back from an item analysis, and what people decided on them since: the
lines the next release's card carries."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchfoundry.core.records import ReviewRecord
from benchfoundry.decisions.suspects import SuspectsError, read_suspects, since_analysis
from benchfoundry.tasks.evaluate.items import SCHEMA

WHEN = "2026-12-03T10:00:00.000000000Z"


def _items(path, suspects: dict[str, bool]):
    rows = [
        {"dataset": "demo", "version": "1.0.0", "question_id": q, "suspect": s, "analysed_at": WHEN,
         "why": "discrimination -0.50 ± 0.30" if s else None}
        for q, s in suspects.items()
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)
    return path


def _decision(qid, reviewer, decision, at, **extra):
    return ReviewRecord(
        question_id=qid, reviewer=reviewer, decision=decision, tool="web", candidate_hash="h",
        decided_at=at, **extra,
    )  # fmt: skip


def test_what_became_of_the_suspects(tmp_path):
    path = _items(tmp_path / "items.parquet", {f"q{i}": i < 6 for i in range(8)})
    assert set(read_suspects(path)) == {f"q{i}" for i in range(6)}
    later, earlier = "2026-12-04T09:00:00.000000000Z", "2026-12-01T09:00:00.000000000Z"
    reviews = [
        _decision("q0", "ann", "accept", earlier),  # before the analysis: does not count
        _decision("q1", "ann", "reject", later),
        _decision("q2", "ann", "fix_answer", later, new_answer="C"),
        _decision("q3", "ann", "accept", later),
        _decision("q4", "ann", "accept", later),
        _decision("q4", "bo", "reject", later),  # two people disagree
        _decision("q5", "auto", "accept", later),  # the automatic reviewer is not a person
        _decision("q7", "ann", "reject", later),  # not a suspect
    ]
    (line,) = since_analysis(path, reviews)
    assert line == (
        "item analysis of demo 1.0.0 (2026-12-03): 6 suspect items (discrimination near zero "
        "or negative); since then, by people: kept 1, fixed 1, dropped 1, in conflict 1, "
        "awaiting review 2"
    )


def test_no_analysis_no_line_and_a_missing_file_is_a_clear_error(tmp_path):
    assert since_analysis(tmp_path / "items.parquet", []) == []
    clean = _items(tmp_path / "items.parquet", {"q0": False})
    assert since_analysis(clean, []) == [
        "item analysis of demo 1.0.0 (2026-12-03): no suspect item"
    ]
    with pytest.raises(SuspectsError, match="run benchfoundry report"):
        read_suspects(tmp_path / "nowhere.parquet")


def test_translation_suspects_go_back_as_their_twin_and_old_files_are_all_english(tmp_path):
    rows = [
        {"dataset": "demo", "version": "1.0.0", "question_id": q, "language": language,
         "suspect": kind is not None, "suspect_kind": kind, "review_item": item,
         "analysed_at": WHEN, "why": kind and f"{kind} suspect"}
        for q, language, kind, item in [
            ("q0", "en", None, None),
            ("q0@zh:1a2b3c4d", "zh", "translation", "q0@zh"),  # its English item is fine
            ("q1", "en", "key", "q1"),
            ("q1@zh:5e6f7a8b", "zh", "key", "q1"),  # a wrong key in both languages
        ]
    ]  # fmt: skip
    path = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)
    assert read_suspects(path) == {"q0@zh": "translation suspect", "q1": "key suspect"}
    later = "2026-12-04T09:00:00.000000000Z"
    reviews = [_decision("q0@zh", "li", "edit", later, language="zh")]
    (line,) = since_analysis(path, reviews)
    assert "2 suspect items (discrimination near zero or negative, 1 of them translations)" in line
    assert line.endswith("since then, by people: fixed 1, awaiting review 1")
    # An items.parquet from before the analysis was made per language: its items are English.
    old = tmp_path / "old.parquet"
    pq.write_table(
        pa.table({"dataset": ["demo"] * 2, "version": ["1.0.0"] * 2, "question_id": ["q0", "q1"],
                  "suspect": [True, False], "why": ["low", None], "analysed_at": [WHEN] * 2}),
        old,
    )  # fmt: skip
    assert read_suspects(old) == {"q0": "low"}
    assert "1 suspect items" in since_analysis(old, [])[0]
