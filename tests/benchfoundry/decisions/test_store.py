"""The review database, on SQLite in the run folder and on a real PostgreSQL 15 server: a run
folder whose decisions are Parquet parts (tests/data/run_reviews_parquet, written by the
Parquet-only review code) migrates in on first open with nothing lost; users and their tokens;
concurrent writers lose and duplicate nothing; a writer killed inside its transaction leaves
the decision absent, and the next one goes on."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchfoundry.core.records import ReviewRecord
from benchfoundry.decisions.outcomes import latest, outcome
from benchfoundry.decisions.reviews import Decision, record
from benchfoundry.decisions.status import review_status
from benchfoundry.decisions.store import ReviewStore, StoreError, shown_url
from benchfoundry.storage.tables import RunFolder

LEGACY = Path(__file__).resolve().parents[2] / "data" / "run_reviews_parquet"
REPO = Path(__file__).resolve().parents[3]
DIMS = ["instance_attributes", "scene_understanding"]


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request) -> str | None:
    """None: SQLite in the run folder; else a fresh PostgreSQL database's URL."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("postgres")()


@pytest.fixture
def legacy(tmp_path) -> RunFolder:
    shutil.copytree(LEGACY, tmp_path / "run")
    return RunFolder(tmp_path / "run")


def _dump(r: ReviewRecord) -> dict:
    return r.model_dump(exclude={"role"})


def test_parquet_decisions_migrate_in_on_first_open_and_nothing_is_lost(legacy, database):
    before = legacy.table(ReviewRecord).records()
    assert len(before) == 7 and len(legacy.table(ReviewRecord).parts()) == 7
    store = ReviewStore.open(legacy, database)
    assert sorted(map(str, map(_dump, store.records()))) == sorted(map(str, map(_dump, before)))
    assert ReviewStore.open(legacy, database).count() == 7, "opened again: no second copy"
    current = store.latest()
    assert outcome(current["q0"])[0] == "adjudicated"
    assert current["q2"]["ann"].decision == "accept", "the later of ann's two decisions"
    assert current["q2"]["ann"].note is None and current["q3"]["ann"].new_options[1] == "lime"
    # a new decision goes to the database; the snapshot holds old and new, in one part
    added, _, refused = record(
        legacy, [Decision("q1", "bo", "accept")], "web", DIMS, store=store, role="annotator"
    )
    assert (added, refused) == (1, [])
    assert legacy.table(ReviewRecord).count() == 7, "the Parquet table waits for a snapshot"
    assert store.snapshot() == 8
    table = legacy.table(ReviewRecord)
    assert len(table.parts()) == 1 and table.count() == 8
    stored = {(r.question_id, r.reviewer, r.decided_at): r for r in table.records()}
    assert all(_dump(stored[(r.question_id, r.reviewer, r.decided_at)]) == _dump(r) for r in before)
    (new,) = [r for r in stored.values() if r.reviewer == "bo" and r.question_id == "q1"]
    assert new.role == "annotator" and new.tool == "web"
    assert "role" in pq.read_schema(table.parts()[0]).names


def test_status_comes_from_the_database(legacy, database):
    store = ReviewStore.open(legacy, database)
    state = review_status(legacy, store)
    assert state.decisions == 7 and state.states.get("adjudicated") == 1
    assert state.batches[0]["decided"] == 4, "ann decided all four of her batch"


def test_users_tokens_roles_and_assignments(legacy, database):
    store = ReviewStore.open(legacy, database)
    token = store.add_user("ann", "annotator")
    assert len(token) >= 40 and store.authenticate(token).name == "ann"
    assert store.authenticate(token[:-1] + ("x" if token[-1] != "x" else "y")) is None
    assert store.authenticate("") is None
    with pytest.raises(StoreError, match="exists"):
        store.add_user("ann", "admin")
    with pytest.raises(StoreError, match="not one of annotator, adjudicator, admin"):
        store.add_user("cy", "boss")
    with pytest.raises(StoreError, match="cannot be a user name"):
        store.add_user("<b>", "annotator")
    lead = store.add_user("lead", "adjudicator")
    store.revoke("ann")
    assert store.authenticate(token) is None and store.authenticate(lead).role == "adjudicator"
    again = store.add_user("ann", "annotator")
    assert again != token and store.authenticate(again).name == "ann"
    with pytest.raises(StoreError, match="no batch"):
        store.assign("nope", "lead")
    with pytest.raises(StoreError, match="no active user"):
        store.assign("b-ann", "zed")
    store.assign("b-ann", "lead", "admin")
    assert store.assignments() == {"b-ann": "lead"}
    assert review_status(legacy, store).batches[0]["reviewer"] == "lead"
    # only hashes are stored
    from sqlalchemy import text

    with store.engine.connect() as connection:
        dumped = " ".join(str(row) for row in connection.execute(text("SELECT * FROM users")))
    assert token not in dumped and again not in dumped and lead not in dumped


def test_concurrent_writers_lose_and_duplicate_nothing(legacy, database):
    store = ReviewStore.open(legacy, database)
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            for i in range(4):
                for q in ("q0", "q1", "q2", "q3"):
                    decision = Decision(q, name, "reject" if i % 2 else "accept", reason="x")
                    record(legacy, [decision], "web", DIMS, store=store)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def snapshots() -> None:
        for _ in range(5):
            store.snapshot()

    threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(4)]
    threads.append(threading.Thread(target=snapshots))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert store.count() == 7 + 4 * 16
    current = latest(store.records())
    assert all(current[q][f"w{i}"].decision == "reject" for q in current for i in range(4))
    assert store.snapshot() == 7 + 64 and legacy.table(ReviewRecord).count() == 71


def test_a_writer_killed_inside_its_transaction_stores_nothing_and_the_next_goes_on(
    legacy, database
):
    ReviewStore.open(legacy, database)
    script = (
        "import sys\n"
        "from benchfoundry.decisions.reviews import Decision, record\n"
        "from benchfoundry.decisions.store import ReviewStore\n"
        "from benchfoundry.storage.tables import RunFolder\n"
        "run = RunFolder(sys.argv[1]); url = sys.argv[2] or None\n"
        "record(run, [Decision('q1', 'bo', 'accept')], 'web', store=ReviewStore.open(run, url))\n"
    )
    env = {**os.environ, "BENCHFOUNDRY_CRASH_AT": "review.before_commit"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(legacy.root), database or ""],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    store = ReviewStore.open(legacy, database)
    assert store.count() == 7 and "bo" not in store.latest(["q1"]).get("q1", {})
    assert record(legacy, [Decision("q1", "bo", "accept")], "web", DIMS, store=store)[0] == 1
    assert store.count() == 8


def test_a_database_that_cannot_be_reached_is_a_clear_error_without_its_password(tmp_path):
    url = "postgresql://bench:s3cret-pw@127.0.0.1:9/none"
    with pytest.raises(StoreError) as caught:
        ReviewStore.open(tmp_path / "run", url)
    assert "s3cret-pw" not in str(caught.value) and "127.0.0.1:9" in str(caught.value)
    assert "s3cret-pw" not in shown_url(url)
