"""A run folder written before structured columns existed (tests/data/run_v1, made with the
2026-12-01 version: ingest of a few scenes, their questions TSV and two broken files, extract,
generate, then filter with one model that cannot be reached, and select) opens in today's layout:
each part is upgraded once, in place, and the folder keeps working with every command."""

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    ImageSourceRecord,
    JudgementRecord,
    QuarantineRecord,
    VisualFactsRecord,
    arrow_schema,
)
from benchfoundry.storage.refusals import refused_candidates
from benchfoundry.storage.tables import RunFolder

LEGACY = Path(__file__).resolve().parents[2] / "data" / "run_v1"


@pytest.fixture
def legacy(tmp_path) -> RunFolder:
    shutil.copytree(LEGACY, tmp_path / "run")
    return RunFolder(tmp_path / "run")


def test_an_old_folder_is_upgraded_on_open_with_nothing_lost(legacy):
    before = {
        t: sorted(p.name for p in legacy.table(t).parts())
        for t in (QuarantineRecord, CandidateRecord, JudgementRecord, ImageRecord)
    }
    old = pq.read_table(legacy.table(QuarantineRecord).parts()[0])
    assert "ref_kind" not in old.column_names, "the fixture is in the old layout"
    counts = {
        t: sum(pq.ParquetFile(p).metadata.num_rows for p in legacy.table(t).parts()) for t in before
    }

    quarantine = legacy.table(QuarantineRecord).records()
    refused = [q for q in quarantine if q.stage == "generate"]
    assert refused and all(q.ref_kind == "candidate" for q in refused)
    assert all(q.source == f"candidate:{q.ref_id}#{q.dimension}" for q in refused)
    assert {q.ref_kind for q in quarantine if q.stage == "ingest"} == {"file"}
    assert set(refused_candidates(legacy)) == {q.ref_id for q in refused}

    judgements = legacy.table(JudgementRecord).records()
    failed = [j for j in judgements if j.error]
    assert failed and {j.error_kind for j in failed} == {"connection"}
    assert all(not j.error.startswith("connection:") for j in failed)
    assert all(j.error_kind is None for j in judgements if not j.error)

    candidates = legacy.table(CandidateRecord).records()
    seeds = [c for c in candidates if c.generator.startswith("seed:")]
    drafts = [c for c in candidates if not c.generator.startswith("seed:")]
    assert seeds and all("index" in c.meta and not c.flags for c in seeds)
    assert drafts and all(c.meta == {} and c.cost == 0.0 for c in drafts)
    assert all(
        isinstance(i.meta, dict) and i.meta.get("file") for i in legacy.table(ImageRecord).records()
    )
    assert all(isinstance(s.meta, dict) for s in legacy.table(ImageSourceRecord).records())
    facts = legacy.table(VisualFactsRecord).records()
    assert facts and all(c.prompt_id is None for f in facts for c in f.captions)

    # Upgraded in place: same part names, same rows, today's schema, recorded once.
    for table, names in before.items():
        parts = legacy.table(table).parts()
        assert [p.name for p in parts] == names
        assert all(
            pq.read_schema(p).equals(arrow_schema(table), check_metadata=False) for p in parts
        )
        assert sum(pq.ParquetFile(p).metadata.num_rows for p in parts) == counts[table]
    migrations = legacy.read_manifest()["migrations"]
    assert {m["table"] for m in migrations} >= {"quarantine", "candidates", "judgements", "images"}
    assert len({(m["table"], m["part"]) for m in migrations}) == len(migrations)


def test_the_upgraded_folder_keeps_working_with_the_commands(legacy, tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    runner = CliRunner()
    status = runner.invoke(app, ["status", "--out", str(legacy.root), "--json"])
    assert status.exit_code == 0, status.output
    rows = json.loads(status.stdout)["table_rows"]
    assert rows["candidates"] == 20 and rows["quarantine"] == 6
    from benchfoundry.core.records import RECORDS_BY_TABLE
    from benchfoundry.pipeline.registry import STAGES, StageRun
    from benchfoundry.storage import tables as storage

    # Select again over the stored answers: every candidate decided, the refused ones refused.
    summary = STAGES["select"].run(
        StageRun(run=str(legacy.root), models={"text_only": ["blind/longest"]}, stages=["select"])
    )
    assert sum(summary.decisions.values()) == 20 and summary.decisions["refused"] == 4
    for record in RECORDS_BY_TABLE.values():
        legacy.table(record).read()
    migrations = legacy.read_manifest()["migrations"]
    storage._CHECKED.clear()  # as a new process would: every part checked again
    for record in RECORDS_BY_TABLE.values():
        legacy.table(record).read()
    assert legacy.read_manifest()["migrations"] == migrations, "each part is upgraded once"
    assert len({(m["table"], m["part"]) for m in migrations}) == len(migrations)


def test_results_without_grader_columns_gain_them_empty(tmp_path):
    """A results table from before open-ended grading opens with the grader columns empty."""
    import pyarrow as pa

    from benchfoundry.core.records import ResultRecord
    from benchfoundry.storage import tables as storage

    old = {
        "run_id": ["r"], "model": ["m"], "question_id": ["q"], "pass_index": [0],
        "option_order": [["A", "B"]], "response": ["A"], "extracted": ["A"],
        "extracted_by": ["heuristic"], "correct": [True], "score": [None],
        "category": ["c"], "l2_category": [None],
    }  # fmt: skip
    schema = arrow_schema(ResultRecord)
    schema = pa.schema([schema.field(name) for name in old])
    (tmp_path / "results").mkdir()
    pq.write_table(pa.table(old, schema=schema), tmp_path / "results" / "part-old.parquet")
    storage._CHECKED.discard((tmp_path / "results").resolve())
    (record,) = RunFolder(tmp_path).table(ResultRecord).records()
    assert record.option_order == ["A", "B"] and record.grader_reply is None
    assert RunFolder(tmp_path).read_manifest()["migrations"][0]["table"] == "results"


def test_candidates_and_segments_without_their_parts_gain_them_empty(tmp_path):
    """Tables written before a template's parts (and an annotation's) were kept open with them
    empty, and with nothing else lost."""
    import pyarrow as pa

    from benchfoundry.core.records import SegmentRecord
    from benchfoundry.storage import tables as storage

    candidate = {
        "question_id": ["q"], "image_id": ["i"], "dimension": ["d"], "question": ["Q?"],
        "hint": [None], "options": [["a", "b"]], "answer": ["A"], "category": [None],
        "l2_category": [None], "split": [None], "generator": ["template:count"],
        "prompt_id": [None], "prompt_hash": [None], "evidence": [["e"]], "source": ["s"],
        "meta": [[("video", "v.mp4")]], "flags": [["length_outlier"]], "cost": [0.5],
        "raw_output": [None],
    }  # fmt: skip
    segment = {
        "segment_id": ["s"], "clip_id": ["c"], "video": ["v.mp4"], "start": [0.0], "end": [1.0],
        "label": ["Moving cup up"], "family": ["Moving [something] up"], "order": [0],
        "source": ["labels.json#id=1"], "source_kind": ["videos:ssv2"], "frames": [["f"]],
        "frame_times": [[0.5]],
    }  # fmt: skip
    for record, old in ((CandidateRecord, candidate), (SegmentRecord, segment)):
        schema = arrow_schema(record)
        schema = pa.schema([schema.field(name) for name in old])
        (tmp_path / record.table).mkdir()
        pq.write_table(pa.table(old, schema=schema), tmp_path / record.table / "part-old.parquet")
        storage._CHECKED.discard((tmp_path / record.table).resolve())
    (c,) = RunFolder(tmp_path).table(CandidateRecord).records()
    assert (c.slots, c.option_slots) == ({}, [])
    assert (c.meta, c.flags, c.cost) == ({"video": "v.mp4"}, ["length_outlier"], 0.5)
    (s,) = RunFolder(tmp_path).table(SegmentRecord).records()
    assert (s.placeholders, s.noun, s.family) == ([], None, "Moving [something] up")
