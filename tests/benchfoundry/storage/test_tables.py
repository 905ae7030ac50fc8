import os
import signal
import subprocess
import sys
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchfoundry.core.crash_points import ENV
from benchfoundry.core.records import QuarantineRecord, ScoredRecord
from benchfoundry.storage.tables import RunFolder, SchemaMismatchError


def _q(source: str, reason: str = "not_an_image") -> QuarantineRecord:
    return QuarantineRecord(
        source=source, stage="ingest", reason=reason, detail="d", source_kind="folder"
    )


def test_append_adds_only_new_keys(tmp_path):
    table = RunFolder(tmp_path).table(QuarantineRecord)
    first = table.append([_q("a"), _q("b"), _q("a")])
    assert (first.added, first.repeated_in_batch) == (2, 1)
    again = table.append([_q("b"), _q("a")])
    assert (again.added, again.already_stored, again.path) == (0, 2, None)
    more = table.append([_q("c"), _q("a", "too_small")])
    assert more.added == 2
    assert table.count() == 4 and len(table.parts()) == 2
    assert sorted(table.key_set()) == sorted(
        [
            ("ingest", s, r)
            for s, r in [
                ("a", "not_an_image"),
                ("b", "not_an_image"),
                ("c", "not_an_image"),
                ("a", "too_small"),
            ]
        ]
    )
    assert {r.source for r in table.records()} == {"a", "b", "c"}
    assert (tmp_path / "quarantine").is_dir()


def test_append_refuses_a_record_of_another_table(tmp_path):
    scored = ScoredRecord(
        question_id="q",
        image_id="i",
        dimension="d",
        answer="A",
        hits_text=0,
        hits_text_circular=None,
        n_text_models=1,
        text_hit_by=[],
        hits_vlm=0,
        hits_vlm_circular=None,
        n_vlm_models=1,
        vlm_hit_by=[],
        flags=[],
        difficulty=None,
        decision="selected",
        reason="r",
        rank=None,
    )
    with pytest.raises(TypeError, match="QuarantineRecord"):
        RunFolder(tmp_path).table(QuarantineRecord).append([scored])


def test_reading_a_part_with_a_wrong_schema_names_the_column(tmp_path):
    table = RunFolder(tmp_path).table(QuarantineRecord)
    table.append([_q("a")])
    bad = pa.table(
        {"source": ["x"], "stage": ["ingest"], "reason": [3], "detail": ["d"], "source_kind": ["f"]}
    )
    pq.write_table(bad, table.path / "part-zz.parquet")
    with pytest.raises(SchemaMismatchError, match="column 'reason' has type int64"):
        table.read()
    good = bad.set_column(2, "reason", pa.array(["r"]))
    pq.write_table(good.drop(["detail"]), table.path / "part-zz.parquet")
    with pytest.raises(SchemaMismatchError, match="column 'detail' is missing"):
        table.records()


def test_killed_writer_leaves_no_partial_part(tmp_path):
    """SIGKILL a process at the crash point between writing a part in full under its temporary
    name and renaming it: no part appears, and the next append and read work as if the killed
    write never started."""
    script = textwrap.dedent(f"""
        from benchfoundry.core.records import QuarantineRecord
        from benchfoundry.storage.tables import RunFolder
        rows = [QuarantineRecord(source=f"s{{i}}", stage="ingest", reason="r", detail="d" * 1000,
                                 source_kind="k") for i in range(200)]
        RunFolder({str(tmp_path)!r}).table(QuarantineRecord).append(rows)
        print("not killed", flush=True)
    """)
    table = RunFolder(tmp_path).table(QuarantineRecord)
    env = {**os.environ, ENV: "storage.before_rename"}
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert child.returncode == -signal.SIGKILL and "not killed" not in child.stdout
    left = [p for p in table.path.iterdir() if p.name.startswith(".tmp-")]
    assert len(left) == 1 and pq.read_metadata(left[0]).num_rows == 200, "written, not renamed"
    assert table.parts() == []
    assert table.read().num_rows == 0
    assert table.append([_q("after")]).added == 1
    assert [r.source for r in table.records()] == ["after"]


def test_manifest_sections_are_kept(tmp_path):
    run = RunFolder(tmp_path)
    run.update_manifest("build", {"spec": "x"})
    run.update_manifest("ingest", {"n": 1})
    assert run.read_manifest() == {"build": {"spec": "x"}, "ingest": {"n": 1}}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_rewrite_replaces_keys_and_dropped_rows_in_one_part(tmp_path):
    table = RunFolder(tmp_path).table(QuarantineRecord)
    table.append([_q("a"), _q("b")])
    table.append([_q("c")])
    replaced = QuarantineRecord(
        source="a", stage="ingest", reason="not_an_image", detail="new", source_kind="folder"
    )
    result = table.rewrite([replaced, _q("d")], drop=lambda row: row["source"] == "b")
    assert (result.added, result.already_stored) == (2, 1)
    assert len(table.parts()) == 1
    rows = {r.source: r.detail for r in table.records()}
    assert rows == {"a": "new", "c": "d", "d": "d"}
    table.rewrite([], drop=lambda row: True)
    assert table.count() == 0 and table.parts() == []


def test_rewrite_takes_rows_converted_a_chunk_at_a_time(tmp_path):
    table = RunFolder(tmp_path).table(QuarantineRecord)
    table.append([_q("a"), _q("z")])
    later = QuarantineRecord(
        source="c", stage="ingest", reason="not_an_image", detail="later", source_kind="folder"
    )
    rows = table.to_arrow([_q("b"), _q("c"), _q("d"), later, _q("e")], chunk=2)
    assert rows.num_rows == 5 and rows.schema.equals(table.schema)
    result = table.rewrite(rows, drop=lambda row: row["source"] == "z")
    assert (result.added, result.already_stored) == (4, 1), "of two rows for c, the last is kept"
    assert {r.source: r.detail for r in table.records()} == {
        "a": "d",
        "b": "d",
        "c": "later",
        "d": "d",
        "e": "d",
    }
    with pytest.raises(TypeError, match="takes QuarantineRecord"):
        table.to_arrow([_q("f"), RunFolder(tmp_path)])  # type: ignore[list-item]
    with pytest.raises(SchemaMismatchError, match="column 'detail'"):
        table.rewrite(rows.drop_columns(["detail"]))
    assert table.count() == 5, "a refused rewrite changes nothing"


def test_an_interrupted_rewrite_never_shows_old_and_new_rows_together(tmp_path):
    import json

    table = RunFolder(tmp_path).table(QuarantineRecord)
    table.append([_q("a")])
    table.append([_q("b")])
    old = [p.name for p in table.parts()]
    # A rewrite that wrote its journal and its new part, then stopped before removing the old.
    new = table.path / "part-new.parquet"
    pq.write_table(
        pa.Table.from_pylist([_q("c").model_dump()], schema=table.schema), new
    )  # fmt: skip
    journal = table.path / ".rewrite.json"
    journal.write_text(json.dumps({"new": new.name, "old": old}))
    assert [r.source for r in table.records()] == ["c"]
    table.append([_q("d")])  # the next writer finishes the interrupted rewrite
    assert not journal.exists() and {p.name for p in table.parts()} & set(old) == set()
    assert sorted(r.source for r in table.records()) == ["c", "d"]
    # Stopped before its new part was written: the old parts are still the table.
    journal.write_text(json.dumps({"new": "part-never.parquet", "old": ["part-new.parquet"]}))
    assert sorted(r.source for r in table.records()) == ["c", "d"]
    table.append([_q("e")])
    assert not journal.exists() and table.count() == 3
