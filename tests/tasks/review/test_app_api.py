"""The review app's JSON API over real HTTP (uvicorn on 127.0.0.1): batches, one batch with its
samples, decisions stored or refused with a 4xx and a message, a token when one is set, escaped
pages; and the Label Studio round trip on files shaped as Label Studio writes them."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
import uvicorn

from benchfoundry.core.records import CandidateRecord, ReviewRecord, ScoredRecord
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.review.app import create_app
from benchfoundry.tasks.review.stage import export_batches


@pytest.fixture
def run(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record) -> RunFolder:
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions

    run = RunFolder(tmp_path / "run")
    image = store_raw_image(run, image_bytes())
    run.table(CandidateRecord).append(
        [
            candidate_record(f"q{i}", image, dimension="ocr", question=f"Q{i} <i>x</i>?")
            for i in range(3)
        ]
    )
    run.table(ScoredRecord).append(
        [scored_record(f"q{i}", image, dimension="ocr", hits_text=i) for i in range(3)]
    )
    export_batches(str(run.root), ReviewOptions(reviewers=[Reviewer(name="ann")]), "s")
    return run


def _serve(app) -> tuple[str, uvicorn.Server, threading.Thread]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


def _call(url: str, body: object | None = None, headers: dict | None = None) -> tuple[int, object]:
    data = (
        None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            kind = response.headers.get("content-type", "")
            return response.status, json.loads(raw) if "json" in kind else raw.decode()
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


@pytest.fixture
def served(run):
    url, server, thread = _serve(create_app(run.root))
    yield run, url
    server.should_exit = True
    thread.join(timeout=10)


def test_the_api_lists_batches_stores_decisions_and_refuses_bad_ones(served):
    run, url = served
    status, listing = _call(url + "/api/batches")
    (batch,) = listing["batches"]
    assert status == 200 and batch["reviewer"] == "ann" and batch["total"] == 3
    status, one = _call(f"{url}/api/batches/{batch['batch_id']}")
    assert [s["question_id"] for s in one["samples"]] == ["q0", "q1", "q2"]  # hits ascending
    assert one["samples"][0]["options"][0] == {"letter": "A", "text": "q0-0"}
    ok = {
        "question_id": "q1",
        "reviewer": "ann",
        "decision": "fix_answer",
        "new_answer": "C",
        "batch_id": batch["batch_id"],
    }
    assert _call(url + "/api/reviews", ok)[0] == 201
    bad = [
        ({"question_id": "zz", "reviewer": "ann", "decision": "accept"}, 404, "no candidate"),
        ({"question_id": "q0", "reviewer": "ann", "decision": "maybe"}, 422, "is not one of"),
        (
            {"question_id": "q0", "reviewer": "ann", "decision": "fix_answer", "new_answer": "Q"},
            422,
            "letters",
        ),
        (
            {"question_id": "q0", "reviewer": "ann", "decision": "edit", "new_options": ["a", "a"]},
            422,
            "different",
        ),
        (
            {"question_id": "q0", "reviewer": "ann", "decision": "accept", "colour": 1},
            400,
            "unknown field",
        ),
        (b"{not json", 400, "not JSON"),
        (
            {"question_id": "q0", "reviewer": "ann", "decision": "edit", "new_question": 7},
            400,
            "wrong type",
        ),
        ({"question_id": "q0", "reviewer": "ann"}, 400, "required"),
    ]
    for body, code, message in bad:
        got, reply = _call(url + "/api/reviews", body)
        assert got == code and message in reply["error"], (body, got, reply)
    (stored,) = run.table(ReviewRecord).records()
    assert (stored.question_id, stored.new_answer, stored.tool) == ("q1", "C", "web")
    assert _call(f"{url}/api/batches/nope")[0] == 404
    page = _call(f"{url}/batches/{batch['batch_id']}")[1]
    assert "Q0 &lt;i&gt;x&lt;/i&gt;?" in page and "<i>x</i>" not in page


def test_with_a_token_every_request_needs_it(run):
    url, server, thread = _serve(create_app(run.root, token="s3cret"))
    try:
        assert _call(url + "/api/batches")[0] == 401
        assert _call(url + "/api/batches", headers={"Authorization": "Bearer wrong"})[0] == 401
        status, listing = _call(url + "/api/batches", headers={"Authorization": "Bearer s3cret"})
        assert status == 200 and listing["batches"]
        body = {"question_id": "q0", "reviewer": "ann", "decision": "accept"}
        assert _call(url + "/api/reviews", body)[0] == 401
        assert run.table(ReviewRecord).count() == 0
        assert _call(url + "/?token=s3cret")[0] == 200
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_label_studio_tasks_and_export_round_trip(run, tmp_path, prefect_api):
    from typer.testing import CliRunner

    from benchfoundry.cli import app

    runner = CliRunner()
    state = json.loads(
        runner.invoke(app, ["review", "status", "--out", str(run.root), "--json"]).stdout
    )
    batch_id = state["batches"][0]["batch_id"]
    to = tmp_path / "ls" / "tasks.json"
    result = runner.invoke(
        app,
        [
            "review",
            "labelstudio",
            "export",
            "--out",
            str(run.root),
            "--batch",
            batch_id,
            "--to",
            str(to),
        ],
    )
    assert result.exit_code == 0, result.output
    tasks = json.loads(to.read_text())
    config = (to.parent / "label_config.xml").read_text()
    assert len(tasks) == 3 and '<Choices name="decision"' in config and 'value="$image"' in config
    assert tasks[0]["data"]["image"].startswith("data:image/png;base64,")
    assert {t["data"]["question_id"] for t in tasks} == {"q0", "q1", "q2"}
    assert tasks[0]["predictions"][0]["result"][0]["value"]["choices"] == ["accept"]

    # Label Studio's JSON export: the tasks with their annotations (one cancelled).
    def annotation(choices, extra=(), cancelled=False, at="2026-12-01T10:00:00.000000Z"):
        result = [
            {
                "from_name": "decision",
                "to_name": "question",
                "type": "choices",
                "value": {"choices": choices},
            }
        ]
        result += list(extra)
        return {"id": 1, "completed_by": {"id": 1, "email": "ann@example.org"}, "was_cancelled": cancelled,
                "lead_time": 12.5, "created_at": at, "updated_at": at, "result": result}  # fmt: skip

    export = [
        {**tasks[0], "id": 1, "annotations": [annotation(["accept"])]},
        {**tasks[1], "id": 2, "annotations": [annotation(["reject"], [{"from_name": "reason", "to_name": "question", "type": "textarea", "value": {"text": ["ambiguous"]}}])]},
        {**tasks[2], "id": 3, "annotations": [annotation(["accept"], cancelled=True)]},
    ]  # fmt: skip
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(export))
    first = json.loads(
        runner.invoke(
            app, ["review", "import", str(exported), "--out", str(run.root), "--json"]
        ).stdout
    )
    assert (first["tool"], first["read"], first["added"], first["refused"]) == (
        "labelstudio",
        2,
        2,
        [],
    )
    again = json.loads(
        runner.invoke(
            app, ["review", "import", str(exported), "--out", str(run.root), "--json"]
        ).stdout
    )
    assert again["added"] == 0 and again["already_stored"] == 2
    reviews = {r.question_id: r for r in run.table(ReviewRecord).records()}
    assert reviews["q1"].reason == "ambiguous" and reviews["q1"].reviewer == "ann@example.org"
    assert reviews["q0"].tool == "labelstudio" and reviews["q0"].lead_time_s == 12.5
    assert reviews["q0"].batch_id == batch_id


def test_conflicts_are_listed_and_an_adjudication_settles_them(served):
    run, url = served
    post = lambda body: _call(url + "/api/reviews", body)  # noqa: E731
    assert post({"question_id": "q2", "reviewer": "ann", "decision": "accept"})[0] == 201
    body = {"question_id": "q2", "reviewer": "bo", "decision": "reject", "reason": "ambiguous"}
    assert post(body)[0] == 201
    (conflict,) = _call(url + "/api/conflicts")[1]["conflicts"]
    assert conflict["question_id"] == "q2"
    assert [d["reviewer"] for d in conflict["decisions"]] == ["ann", "bo"]
    page = _call(url + "/conflicts")[1]
    assert 'data-question="q2"' in page and "Q2 &lt;i&gt;x&lt;/i&gt;?" in page
    assert post({**body, "reviewer": "lead", "adjudication": "yes"})[0] == 400
    settle = {
        "question_id": "q2",
        "reviewer": "lead",
        "decision": "reject",
        "reason": "ambiguous",
        "adjudication": True,
    }
    assert post(settle)[0] == 201
    assert _call(url + "/api/conflicts")[1]["conflicts"] == []
    lead = [r for r in run.table(ReviewRecord).records() if r.reviewer == "lead"]
    assert len(lead) == 1 and lead[0].adjudication and lead[0].tool == "web"
