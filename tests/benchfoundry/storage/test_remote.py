"""Storage by URL on fsspec's in-memory filesystem: the lease, commits that cannot interleave,
pulls checked by hash, a killed build's work kept, rewritten tables and the cache committed."""

from __future__ import annotations

import json
import time
import uuid

import fsspec
import pytest

from benchfoundry.core.locations import is_url
from benchfoundry.core.records import QuarantineRecord
from benchfoundry.storage.mirror import mirror, mirrored_record
from benchfoundry.storage.objects import Lease, Store, StoreBusy, StoreError
from benchfoundry.storage.remote import RemoteRun, run_folder_at
from benchfoundry.storage.tables import RunFolder


@pytest.fixture(autouse=True)
def _workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHFOUNDRY_WORKDIR", str(tmp_path / "work"))


@pytest.fixture
def url() -> str:
    return f"memory://runs-{uuid.uuid4().hex[:8]}/run"


def _quarantine(*sources: str) -> list[QuarantineRecord]:
    return [
        QuarantineRecord(source=s, source_kind="folder", stage="ingest", reason="r", detail="d")
        for s in sources
    ]


def test_urls_and_paths_are_told_apart():
    assert is_url("s3://bucket/runs/x") and is_url("gs://b/p") and is_url("memory://x")
    assert not is_url("runs/x") and not is_url("/abs/x") and not is_url("file:///tmp/x")
    with pytest.raises(StoreError, match="nope://x"):
        Store("nope://x/y")
    with pytest.raises(StoreError, match="may not carry credentials"):
        Store("s3://bucket/x?X-Amz-Signature=abc")
    with pytest.raises(StoreError, match="not known to put objects conditionally"):
        Lease(Store("file:///tmp/x".replace("file", "local"))).acquire()


def test_a_second_writer_is_refused_while_the_lease_is_held_and_takes_it_once_lapsed(url):
    store = Store(url)
    first = Lease(store, seconds=60)
    first.acquire()
    with pytest.raises(StoreBusy, match="being written by another build"):
        Lease(store, seconds=60).acquire()
    first.release()
    assert not store.exists("_lock.json")
    stale = Lease(store, seconds=0.01)
    stale.acquire()  # its holder "dies": the lease is never renewed
    time.sleep(0.05)
    taker = Lease(store, seconds=60)
    taker.acquire()
    assert json.loads(store.read("_lock.json"))["holder"] == taker.holder
    with pytest.raises(StoreBusy, match="lapsed and another writer took it"):
        stale.renew()


def test_a_commit_that_lost_the_race_is_refused_and_leaves_its_work_in_place(url, tmp_path):
    one, two = RemoteRun(url, tmp_path / "one"), RemoteRun(url, tmp_path / "two")
    assert one.pull() == 0 and two.pull() == 0
    RunFolder(one.path).table(QuarantineRecord).append(_quarantine("a"))
    RunFolder(two.path).table(QuarantineRecord).append(_quarantine("b"))
    assert one.commit("first").number == 1
    with pytest.raises(StoreBusy, match="moved to commit 1"):
        two.commit("second")
    assert [r.source for r in RunFolder(two.path).table(QuarantineRecord).records()] == ["b"]
    assert two.pull() == 1  # behind: brought to the store's commit
    assert [r.source for r in RunFolder(two.path).table(QuarantineRecord).records()] == ["a"]
    [aside] = tmp_path.glob("two.uncommitted-0-*")  # its own work moved aside, never lost
    assert [r.source for r in RunFolder(aside).table(QuarantineRecord).records()] == ["b"]


def test_a_pull_checks_every_file_against_its_commit(url, tmp_path):
    run = RemoteRun(url, tmp_path / "w")
    run.pull()
    RunFolder(run.path).table(QuarantineRecord).append(_quarantine("a", "b"))
    run.commit("rows")
    part = next(n for n in Store(url).files() if n.endswith(".parquet"))
    Store(url).write(part, b"a reader's folder view is not what pulls read")
    RemoteRun(url, tmp_path / "fine").pull()
    [obj] = [n for n in Store(url).files("_objects")]
    Store(url).write(obj, b"not the committed bytes")
    with pytest.raises(StoreError, match="differs from the hash its commit gives"):
        RemoteRun(url, tmp_path / "fresh").pull()
    assert not list((tmp_path / "fresh").rglob("*.parquet"))  # nothing half-fetched


def test_work_since_the_last_commit_stays_in_its_working_copy_only(url, tmp_path):
    run = RemoteRun(url, tmp_path / "w")
    run.pull()
    table = RunFolder(run.path).table(QuarantineRecord)
    table.append(_quarantine("a"))
    run.commit("a")
    table.append(_quarantine("b"))  # then the build is killed: no commit
    assert RemoteRun(url, tmp_path / "w").pull() == 1
    assert len(RunFolder(tmp_path / "w").table(QuarantineRecord).records()) == 2  # resumes
    RemoteRun(url, tmp_path / "other").pull()
    assert len(RunFolder(tmp_path / "other").table(QuarantineRecord).records()) == 1


def test_a_rewritten_table_and_the_response_cache_are_committed_whole(url, tmp_path):
    from benchfoundry.gateway.cache import ResponseCache
    from benchfoundry.gateway.types import Response

    with run_folder_at(url) as where:
        table = RunFolder(where.path).table(QuarantineRecord)
        table.append(_quarantine("a"))
        table.append(_quarantine("b"))
        where.commit("two parts")
        table.rewrite(_quarantine("c"), drop=lambda row: True)
        cache = ResponseCache(where.path / "model_cache.sqlite")  # open, in WAL mode
        cache.put(
            "k",
            Response(
                model="m",
                text="answer",
                finish_reason="stop",
                tokens_in=1,
                tokens_out=1,
                latency_s=0.1,
                cost=0.0,
                cached=False,
                attempts=1,
            ),
        )
    parts = [n for n in Store(url).files() if n.endswith(".parquet")]
    assert len(parts) == 1  # the two replaced parts left the store with the rewrite's commit
    fresh = RemoteRun(url, tmp_path / "fresh")
    fresh.pull()
    assert [r.source for r in RunFolder(fresh.path).table(QuarantineRecord).records()] == ["c"]
    assert ResponseCache(fresh.path / "model_cache.sqlite").get("k").text == "answer"
    assert not Store(url).exists("_lock.json")  # the lease ends with the block
    cache.close()


def test_a_source_folder_is_mirrored_with_what_it_holds_now(tmp_path):
    fs = fsspec.filesystem("memory")
    root = f"/src-{uuid.uuid4().hex[:8]}"
    fs.pipe({f"{root}/a.png": b"1", f"{root}/sub/b.png": b"22"})
    local = mirror(f"memory:/{root}")
    assert sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()) == [
        "a.png",
        "sub/b.png",
    ]
    fs.rm_file(f"{root}/sub/b.png")
    fs.pipe_file(f"{root}/a.png", b"333")
    local = mirror(f"memory:/{root}")
    assert [p.name for p in local.rglob("*") if p.is_file()] == ["a.png"]
    assert (local / "a.png").read_bytes() == b"333"
    # Unchanged objects are not fetched again; one changed in place is, even at the same size.
    copied = (local / "a.png").stat().st_mtime_ns
    time.sleep(0.01)
    assert mirror(f"memory:/{root}") == local
    assert (local / "a.png").stat().st_mtime_ns == copied
    fs.pipe_file(f"{root}/a.png", b"444")
    mirror(f"memory:/{root}")
    assert (local / "a.png").read_bytes() == b"444"


def test_a_mirror_that_failed_midway_fetches_again_what_it_had_not_recorded(tmp_path):
    """The record of fetched versions is written even when a fetch fails, and an object it does
    not name is fetched again: a copy never stays stale because a run stopped early. A source
    file named like the record is mirrored like any other."""
    fs = fsspec.filesystem("memory")
    root = f"/src-{uuid.uuid4().hex[:8]}"
    fs.pipe({f"{root}/.mirrored.json": b"{}", f"{root}/a.png": b"1", f"{root}/b.png": b"2"})
    local = mirror(f"memory:/{root}")
    assert (local / ".mirrored.json").read_bytes() == b"{}"
    record = mirrored_record(local)
    assert sorted(json.loads(record.read_text())) == [".mirrored.json", "a.png", "b.png"]
    record.write_text(json.dumps({"b.png": json.loads(record.read_text())["b.png"]}))
    time.sleep(0.01)
    fs.pipe_file(f"{root}/a.png", b"9")  # same size, and its copy is not in the record
    mirror(f"memory:/{root}")
    assert (local / "a.png").read_bytes() == b"9"


def test_a_single_file_source_is_fetched_again_when_it_changes_at_the_same_size():
    fs = fsspec.filesystem("memory")
    url = f"memory://src-{uuid.uuid4().hex[:8]}/q.tsv"
    fs.pipe_file(url, b"index\tquestion\n1\tone\n")
    local = mirror(url)
    assert local.read_bytes() == b"index\tquestion\n1\tone\n"
    time.sleep(0.01)
    fs.pipe_file(url, b"index\tquestion\n1\ttwo\n")
    assert mirror(url).read_bytes() == b"index\tquestion\n1\ttwo\n"


def test_table_sources_at_a_url_name_their_rows_by_it(tmp_path, image_bytes):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchfoundry.sources.models import ParquetSource, TsvSource
    from benchfoundry.tasks.ingest.reading import read_source

    fs = fsspec.filesystem("memory")
    root = f"/tables-{uuid.uuid4().hex[:8]}"
    tsv = "index\timage_path\tquestion\tA\tB\tanswer\n1\tpics/a.png\tWhat?\tx\ty\tA\n"
    fs.pipe({f"{root}/q.tsv": tsv.encode(), f"{root}/pics/a.png": image_bytes(seed=1)})
    items = read_source(TsvSource(path=f"memory:/{root}/q.tsv", image_root=f"memory:/{root}"))
    assert [i.source for i in items.images] == [f"memory:/{root}/q.tsv#index=1"]
    assert [s.source for s in items.seeds] == [f"memory:/{root}/q.tsv#index=1"]
    assert items.images[0].read() == image_bytes(seed=1)  # fetched from the image root's URL
    assert not items.rejections
    buffer = pa.BufferOutputStream()
    rows = {"index": [1], "question": ["What?"], "A": ["x"], "B": ["y"], "answer": ["B"]}
    rows["image"] = [{"bytes": image_bytes(seed=2), "path": None}]
    pq.write_table(pa.table(rows), buffer)
    fs.pipe_file(f"{root}/set.parquet", buffer.getvalue().to_pybytes())
    items = read_source(ParquetSource(path=f"memory:/{root}/set.parquet"))
    assert [s.source for s in items.seeds] == [f"memory:/{root}/set.parquet#index=1"]
    assert items.images and not items.rejections
    with pytest.raises(ValueError, match="does not exist"):
        read_source(TsvSource(path=f"memory:/{root}/missing.tsv"))


def _decisions_db(path, *rows: str) -> None:
    import sqlite3

    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")  # as the review database is opened
    connection.execute("CREATE TABLE IF NOT EXISTS decisions (id INTEGER PRIMARY KEY, what TEXT)")
    connection.executemany("INSERT INTO decisions (what) VALUES (?)", [(r,) for r in rows])
    connection.commit()
    connection.close()


def _rows(path) -> list[str]:
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        return [r for (r,) in connection.execute("SELECT what FROM decisions ORDER BY id")]
    finally:
        connection.close()


def test_review_decisions_never_committed_are_kept_when_the_store_moves_on(url, tmp_path):
    one, two = RemoteRun(url, tmp_path / "one"), RemoteRun(url, tmp_path / "two")
    one.pull()
    _decisions_db(one.path / "reviews.sqlite", "accept q1")
    one.commit("first decision")
    # Opened again and read (its bytes change, what it holds does not): nothing to keep.
    _decisions_db(one.path / "reviews.sqlite")
    assert (one.path / "reviews.sqlite").read_bytes() != Store(url).read(
        "_objects/"
        + json.loads((one.path / ".remote.json").read_text())["files"]["reviews.sqlite"]["sha256"]
    )
    two.pull()
    RunFolder(two.path).table(QuarantineRecord).append(_quarantine("a"))
    two.commit("someone else's work")
    assert one.pull() == 2
    assert not list(tmp_path.glob("one.uncommitted-*"))
    assert _rows(one.path / "reviews.sqlite") == ["accept q1"]
    # A decision made and never committed (the command was killed), then the store moves on:
    # the working copy is moved aside with it, not overwritten.
    _decisions_db(one.path / "reviews.sqlite", "reject q2")
    two.pull()
    RunFolder(two.path).table(QuarantineRecord).append(_quarantine("b"))
    two.commit("more of someone else's work")
    assert one.pull() == 3
    [aside] = tmp_path.glob("one.uncommitted-2-*")
    assert _rows(aside / "reviews.sqlite") == ["accept q1", "reject q2"]
    assert _rows(one.path / "reviews.sqlite") == ["accept q1"]
    # An entry of a response cache is asked again if lost: no reason to move anything aside.
    _decisions_db(one.path / "model_cache.sqlite", "a cached answer")
    two.pull()
    RunFolder(two.path).table(QuarantineRecord).append(_quarantine("c"))
    two.commit("and more")
    assert one.pull() == 4
    assert len(list(tmp_path.glob("one.uncommitted-*"))) == 1
