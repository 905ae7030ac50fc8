"""Users and batch assignments from the command line, the automatic reviewer on request, and the
review database under concurrent writers and a server killed in the middle of a decision: the
real CLI in subprocesses, a real `review serve`, real HTTP."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchfoundry.core.records import ReviewBatchRecord, ReviewRecord
from benchfoundry.decisions.store import ReviewStore, snapshot_run

BIN = Path(sys.executable).parent
ANN = "ann-token-for-the-review-tests-0123456789"  # as the conftest's users


class Ran:
    def __init__(self, result) -> None:
        self.returncode, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr


def cli(*args: str) -> Ran:
    """The benchfoundry command in this process (Typer's runner: the real command code)."""
    from typer.testing import CliRunner

    from benchfoundry.cli import app

    return Ran(CliRunner().invoke(app, list(args)))


def test_users_are_added_listed_revoked_and_batches_assigned_from_the_cli(run):
    out = str(run.root)
    added = cli("review", "users", "add", "dee", "--role", "adjudicator", "--out", out, "--json")
    assert added.returncode == 0, added.stderr
    made = json.loads(added.stdout)
    assert made["name"] == "dee" and made["role"] == "adjudicator" and len(made["token"]) >= 40
    assert ReviewStore.open(run).authenticate(made["token"]).name == "dee"
    listed = cli("review", "users", "list", "--out", out, "--json")
    users = {u["name"]: u for u in json.loads(listed.stdout)["users"]}
    assert users["dee"]["role"] == "adjudicator" and users["dee"]["active"]
    assert made["token"] not in listed.stdout + listed.stderr, "a token is shown only once"
    twice = cli("review", "users", "add", "dee", "--out", out)
    assert twice.returncode == 1 and "exists" in twice.stderr
    bad_role = cli("review", "users", "add", "eve", "--role", "boss", "--out", out)
    assert (
        bad_role.returncode == 1
        and "annotator, adjudicator or admin" in bad_role.stderr.replace(", admin", " or admin")
    )
    revoked = cli("review", "users", "revoke", "dee", "--out", out, "--json")
    assert revoked.returncode == 0 and json.loads(revoked.stdout)["revoked_at"]
    assert ReviewStore.open(run).authenticate(made["token"]) is None
    (batch,) = run.table(ReviewBatchRecord).records()
    moved = cli("review", "assign", batch.batch_id, "--to", "bo", "--out", out, "--json")
    assert moved.returncode == 0 and ReviewStore.open(run).assignments() == {batch.batch_id: "bo"}
    for wrong, said in (("nope", "no batch nope"), (batch.batch_id, "no active user 'dee'")):
        refused = cli("review", "assign", wrong, "--to", "dee", "--out", out)
        assert refused.returncode == 1 and said in refused.stderr, refused.stderr


def test_publishing_without_people_names_the_command_that_gets_there(run, tmp_path, prefect_api):
    out = str(run.root)
    to = str(tmp_path / "releases")
    refused = cli("publish", "--out", out, "--to", to, "--allow-unreviewed")
    assert refused.returncode == 1
    assert f"benchfoundry review export --auto --out {out}" in refused.stderr, refused.stderr
    plain = cli("publish", "--out", out, "--to", to)
    assert "review serve" in plain.stderr and "--allow-unreviewed" in plain.stderr
    auto = cli("review", "export", "--auto", "--out", out, "--json")
    assert auto.returncode == 0, auto.stderr
    accepted = [r for r in ReviewStore.open(run).records() if r.reviewer == "auto"]
    assert accepted and all(r.tool == "auto" and r.decision == "accept" for r in accepted)
    assert json.loads(auto.stdout)["auto_accepted"] == len(accepted)
    assert run.table(ReviewRecord).count() == len(accepted), "export writes the snapshot"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(run, port: int, env: dict[str, str] | None = None) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(BIN / "benchfoundry"), "review", "serve", "--out", str(run.root), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(server.stderr.read().decode()) from None
            time.sleep(0.2)


def _post(port: int, body: dict, token: str = ANN) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST", "/api/reviews", json.dumps(body),
            {"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        )  # fmt: skip
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_server_killed_inside_a_decision_leaves_it_absent_and_a_restart_goes_on(run):
    port = _free_port()
    first = _serve(run, port)
    try:
        assert _post(port, {"question_id": "q0", "decision": "accept"}) == 201
    finally:
        first.terminate()
        first.wait(timeout=30)
    assert run.table(ReviewRecord).count() == 1, "the snapshot when the app stopped"
    doomed = _serve(run, port, {"BENCHFOUNDRY_CRASH_AT": "review.before_commit"})
    try:
        _post(port, {"question_id": "q1", "decision": "accept"})
        raise AssertionError("the server answered instead of dying")
    except (ConnectionError, http.client.HTTPException, OSError):
        pass
    assert doomed.wait(timeout=30) == -signal.SIGKILL
    store = ReviewStore.open(run)
    assert [(r.question_id, r.reviewer) for r in store.records()] == [("q0", "ann")]
    again = _serve(run, port)
    try:
        assert _post(port, {"question_id": "q1", "decision": "accept"}) == 201
        assert _post(port, {"question_id": "q2", "decision": "reject", "reason": "x"}) == 201
    finally:
        again.terminate()
        again.wait(timeout=30)
    stored = sorted(r.question_id for r in run.table(ReviewRecord).records())
    assert stored == ["q0", "q1", "q2"]


def test_the_app_an_import_and_publishing_snapshots_at_once_lose_and_duplicate_nothing(
    bo_cross_checks, tmp_path
):
    run = bo_cross_checks
    port = _free_port()
    server = _serve(run, port)
    posted: list[int] = []
    stop = threading.Event()

    def annotator(token: str) -> None:
        for i in range(12):
            decision = "accept" if i % 2 else "reject"
            body = {"question_id": f"q{i % 3}", "decision": decision, "reason": f"round {i}"}
            posted.append(_post(port, body, token))

    def publishing() -> None:  # what publish does before it reads: a snapshot, over and over
        while not stop.is_set():
            snapshot_run(run)

    lines = [
        {"question_id": f"q{i}", "reviewer": "lead", "decision": "accept", "note": f"file {i}"}
        for i in range(3)
    ]
    file = tmp_path / "decisions.jsonl"
    file.write_text("\n".join(json.dumps(line) for line in lines))
    workers = [
        threading.Thread(target=annotator, args=(ANN,)),
        threading.Thread(target=annotator, args=(ANN.replace("ann", "bo", 1),)),
        threading.Thread(target=publishing),
    ]
    try:
        for w in workers:
            w.start()
        imported = subprocess.run(
            [str(BIN / "benchfoundry"), "review", "import", str(file), "--out", str(run.root),
             "--json"], capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        for w in workers[:2]:
            w.join(timeout=120)
    finally:
        stop.set()
        workers[2].join(timeout=60)
        server.terminate()
        server.wait(timeout=30)
    assert imported.returncode == 0 and json.loads(imported.stdout)["added"] == 3
    assert posted == [201] * 24
    records = ReviewStore.open(run).records()
    keys = [(r.question_id, r.reviewer, r.decided_at) for r in records]
    assert len(keys) == len(set(keys)) == 27, "every decision once"
    snapshot = {
        (r.question_id, r.reviewer, r.decided_at) for r in run.table(ReviewRecord).records()
    }
    assert snapshot == set(keys), "the last snapshot holds them all"
