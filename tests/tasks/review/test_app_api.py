"""The review app's JSON API over real HTTP (uvicorn on 127.0.0.1): batches, one batch with its
samples, decisions stored or refused with a 4xx and a message, a token when one is set, escaped
pages; and the Label Studio round trip on files shaped as Label Studio writes them."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from benchfoundry.core.records import CandidateRecord, ScoredRecord
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.review.app import create_app
from benchfoundry.tasks.review.stage import export_batches


def _token(name: str) -> str:
    return f"{name}-token-for-the-review-tests-0123456789"  # as the conftest's users


def _call(
    url: str, body: object | None = None, headers: dict | None = None, as_user: str | None = None
) -> tuple[int, object]:
    """A request signed in as `as_user`, else as the body's reviewer, else as the admin."""
    data = (
        None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    if headers is None:
        name = as_user or (body.get("reviewer") if isinstance(body, dict) else None) or "chief"
        headers = {"Authorization": f"Bearer {_token(name)}"}
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            kind = response.headers.get("content-type", "")
            return response.status, json.loads(raw) if "json" in kind else raw.decode()
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


@pytest.fixture
def served(run, serve_app):
    return run, serve_app(create_app(run.root))


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
    (stored,) = ReviewStore.open(run).records()
    assert (stored.question_id, stored.new_answer, stored.tool) == ("q1", "C", "web")
    assert _call(f"{url}/api/batches/nope")[0] == 404
    page = _call(f"{url}/batches/{batch['batch_id']}")[1]
    assert "Q0 &lt;i&gt;x&lt;/i&gt;?" in page and "<i>x</i>" not in page


def test_with_a_token_every_request_needs_it(run, serve_app):
    url = serve_app(create_app(run.root, token="s3cret"))
    assert _call(url + "/api/batches")[0] == 401
    assert _call(url + "/api/batches", headers={"Authorization": "Bearer wrong"})[0] == 401
    status, listing = _call(url + "/api/batches", headers={"Authorization": "Bearer s3cret"})
    assert status == 200 and listing["batches"]
    body = {"question_id": "q0", "decision": "accept"}
    assert _call(url + "/api/reviews", body)[0] == 401, "a user's token is not the shared one"
    assert ReviewStore.open(run).count() == 0
    with_token = {"Authorization": "Bearer s3cret"}
    assert _call(url + "/api/reviews", body, headers=with_token)[0] == 201
    (stored,) = ReviewStore.open(run).records()
    assert stored.reviewer == "reviewer" and stored.role == "admin"


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
    reviews = {r.question_id: r for r in ReviewStore.open(run).records()}
    assert reviews["q1"].reason == "ambiguous" and reviews["q1"].reviewer == "ann@example.org"
    assert reviews["q0"].tool == "labelstudio" and reviews["q0"].lead_time_s == 12.5
    assert reviews["q0"].batch_id == batch_id


def test_label_studio_annotators_are_reviewers_by_email_id_or_map(run, tmp_path, prefect_api):
    """Two annotators of one task are two reviewers: by e-mail, or by user id through
    --reviewers-map; two ids on one batch reviewer's tasks with no map are refused."""
    from typer.testing import CliRunner

    from benchfoundry.cli import app

    runner = CliRunner()

    def imported(export: list, *extra: str):
        path = tmp_path / "export.json"
        path.write_text(json.dumps(export))
        args = ["review", "import", str(path), "--out", str(run.root), "--json", *extra]
        return runner.invoke(app, args)

    def task(qid: str, *who) -> dict:
        accept = [{"from_name": "decision", "type": "choices", "value": {"choices": ["accept"]}}]
        return {"data": {"question_id": qid, "reviewer": "ann"},
                "annotations": [{"completed_by": w, "result": accept} for w in who]}  # fmt: skip

    by_id = [task("q0", 7, 9)]
    refused = imported(by_id)
    assert refused.exit_code == 1
    assert "Label Studio users 7, 9 annotated tasks of 'ann'" in refused.output
    assert "--reviewers-map" in refused.output and not ReviewStore.open(run).records()
    names = tmp_path / "reviewers.json"
    names.write_text(json.dumps({"7": "ann", "bo@example.org": "bo"}))
    unnamed = imported(by_id, "--reviewers-map", str(names))  # 9 would be 'ann' too
    assert unnamed.exit_code == 1 and "names user 9 by id only" in unnamed.output

    names.write_text(json.dumps({"7": "ann", "9": "bo"}))
    done = json.loads(imported(by_id, "--reviewers-map", str(names)).stdout)
    assert (done["added"], done["refused"]) == (2, [])
    emails = [task("q1", {"id": 7, "email": "ann@example.org"}, {"id": 9, "email": "cy@x.org"})]
    names.write_text(json.dumps({"ann@example.org": "ann"}))
    assert json.loads(imported(emails, "--reviewers-map", str(names)).stdout)["added"] == 2
    reviewers = {(r.question_id, r.reviewer) for r in ReviewStore.open(run).records()}
    assert reviewers == {("q0", "ann"), ("q0", "bo"), ("q1", "ann"), ("q1", "cy@x.org")}
    # One user id alone on a reviewer's tasks is that reviewer (Label Studio's plain export).
    assert json.loads(imported([task("q2", 7)]).stdout)["added"] == 1
    assert ("q2", "ann") in {(r.question_id, r.reviewer) for r in ReviewStore.open(run).records()}

    names.write_text(json.dumps(["ann"]))
    bad = imported(emails, "--reviewers-map", str(names))
    assert bad.exit_code != 0 and "a JSON object of Label Studio e-mail" in bad.output
    decisions = tmp_path / "decisions.json"
    decisions.write_text(json.dumps([{"question_id": "q0", "reviewer": "x", "decision": "accept"}]))
    args = [
        "review",
        "import",
        str(decisions),
        "--out",
        str(run.root),
        "--reviewers-map",
        str(names),
    ]
    wrong = runner.invoke(app, args)
    assert wrong.exit_code != 0 and "is not a Label Studio export" in wrong.output


def test_conflicts_are_listed_and_an_adjudication_settles_them(bo_cross_checks, served):
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
    lead = [r for r in ReviewStore.open(run).records() if r.reviewer == "lead"]
    assert len(lead) == 1 and lead[0].adjudication and lead[0].tool == "web"


def test_roles_the_reviewer_is_the_token_user_and_batches_bound_annotators(run, served):
    run, url = served
    batch = _call(url + "/api/batches", as_user="ann")[1]["batches"][0]["batch_id"]
    decide = {"question_id": "q0", "decision": "accept", "batch_id": batch, "lead_time_s": 2.0}
    # another reviewer's name in the body: refused, whoever the signed-in user is
    assert _call(url + "/api/reviews", {**decide, "reviewer": "bo"}, as_user="ann")[0] == 403
    assert _call(url + "/api/reviews", {**decide, "reviewer": "ann"}, as_user="chief")[0] == 403
    # bo is an annotator with no batch here: 403 in ann's batch and on a question of hers
    assert _call(url + "/api/reviews", decide, as_user="bo")[0] == 403
    no_batch = {"question_id": "q1", "decision": "accept"}
    assert _call(url + "/api/reviews", no_batch, as_user="bo")[0] == 403
    # an annotator does not adjudicate; an adjudicator and an admin do
    settle = {"question_id": "q0", "decision": "accept", "adjudication": True}
    assert _call(url + "/api/reviews", settle, as_user="ann")[0] == 403
    assert _call(url + "/api/reviews", settle, as_user="lead")[0] == 201
    # ann in her own batch, with or without naming it; the reviewer defaults to the user
    assert _call(url + "/api/reviews", decide, as_user="ann")[0] == 201
    assert _call(url + "/api/reviews", no_batch, as_user="ann")[0] == 201
    stored = {(r.reviewer, r.question_id): r for r in ReviewStore.open(run).records()}
    mine = stored[("ann", "q0")]
    assert (mine.role, mine.tool, mine.batch_id, mine.lead_time_s) == (
        "annotator",
        "web",
        batch,
        2.0,
    )
    assert mine.decided_at and stored[("lead", "q0")].role == "adjudicator"
    assert len(stored) == 3, "nothing refused was stored"
    # assignment: the admin gives ann's batch to bo, in the app; then bo decides there, ann not
    move = {"to": "bo"}
    assert _call(f"{url}/api/batches/{batch}/assign", move, as_user="ann")[0] == 403
    assert _call(f"{url}/api/batches/{batch}/assign", {"to": "zed"}, as_user="chief")[0] == 422
    assert _call(f"{url}/api/batches/nope/assign", move, as_user="chief")[0] == 404
    assert _call(f"{url}/api/batches/{batch}/assign", move, as_user="chief")[0] == 200
    assert _call(url + "/api/batches", as_user="bo")[1]["batches"][0]["reviewer"] == "bo"
    on_q2 = {"question_id": "q2", "decision": "accept", "batch_id": batch}
    assert _call(url + "/api/reviews", on_q2, as_user="bo")[0] == 201
    assert _call(url + "/api/reviews", on_q2, as_user="ann")[0] == 403


def _fetch(url: str, as_user: str = "ann") -> tuple[int, str, bytes]:
    """(status, media type, body) of a GET as a signed-in user, any media type."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {_token(as_user)}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read()


@pytest.fixture
def long_batch(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record, serve_app):
    """One reviewer's batch of 120 questions about one 200 x 100 image with stored facts."""
    from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions

    run = RunFolder(tmp_path / "long")
    image = store_raw_image(run, image_bytes((200, 100)), size=(200, 100))
    run.table(VisualFactsRecord).append(
        [
            VisualFactsRecord(
                image_id=image, config_hash="c", captions=[], extractors=[],
                instances=[Instance(box=[10.0, 10.0, 60.0, 50.0], mask_area=9, label=None,
                                    attributes=["red", "round", "top left"], dense_caption=None,
                                    score=1.0)],
                ocr_lines=[OcrLine(text="EXIT", box=[100.0, 60.0, 180.0, 90.0], score=0.9)],
            )
        ]
    )  # fmt: skip
    questions = [f"q{i:03d}" for i in range(120)]
    run.table(CandidateRecord).append(
        [
            candidate_record(q, image, dimension="ocr",
                             evidence=["instance at [10, 10, 60, 50] alone", 'OCR line "EXIT"'])
            for q in questions
        ]
    )  # fmt: skip
    run.table(ScoredRecord).append(
        [scored_record(q, image, dimension="ocr", hits_text=i) for i, q in enumerate(questions)]
    )
    options = ReviewOptions(reviewers=[Reviewer(name="ann")], batch_size=120)
    export_batches(str(run.root), options, "s")
    store = ReviewStore.open(run)
    for name, role in (("ann", "annotator"), ("bo", "annotator"), ("chief", "admin")):
        store.add_user(name, role, token=_token(name))
    return run, serve_app(create_app(run.root)), image


def test_images_come_as_thumbnails_of_the_asked_width(long_batch):
    import io

    from PIL import Image

    _, url, image = long_batch
    status, media, body = _fetch(f"{url}/images/{image}?w=50")
    with Image.open(io.BytesIO(body)) as thumb:
        assert (status, media, thumb.format, thumb.size) == (200, "image/jpeg", "JPEG", (50, 25))
    assert _fetch(f"{url}/images/{image}?w=50")[2] == body  # the cached one
    status, media, body = _fetch(f"{url}/images/{image}")
    with Image.open(io.BytesIO(body)) as full:
        assert (status, media, full.size) == (200, "image/png", (200, 100))
    for bad in ("0", "wide", "9999"):
        status, _, body = _fetch(f"{url}/images/{image}?w={bad}")
        assert status == 400 and b"width in pixels" in body
    assert _fetch(f"{url}/images/nope?w=50")[0] == 404


def test_a_long_batch_is_cut_into_pages_of_fifty_and_the_api_into_slices(long_batch):
    _, url, image = long_batch
    batch_id = _call(url + "/api/batches")[1]["batches"][0]["batch_id"]
    first = _call(f"{url}/batches/{batch_id}")[1]
    assert first.count('<article class="sample') == 50 and "page 1 of 3" in first
    assert 'rel="next" href="?page=2"' in first and 'rel="prev"' not in first
    assert f'src="/images/{image}?w=320"' in first and 'loading="lazy"' in first
    assert f'data-full="/images/{image}"' in first
    last = _call(f"{url}/batches/{batch_id}?page=3")[1]
    assert last.count('<article class="sample') == 20 and 'rel="prev" href="?page=2"' in last
    assert 'data-question="q100"' in last and "101 of 120" in last
    for page, code in (("4", 404), ("0", 400), ("two", 400)):
        assert _fetch(f"{url}/batches/{batch_id}?page={page}")[0] == code
    status, sliced = _call(f"{url}/api/batches/{batch_id}?offset=100&limit=50")
    assert status == 200 and (sliced["offset"], sliced["limit"], sliced["total"]) == (100, 50, 120)
    assert [s["question_id"] for s in sliced["samples"]] == [f"q{i:03d}" for i in range(100, 120)]
    assert len(_call(f"{url}/api/batches/{batch_id}")[1]["samples"]) == 120  # no limit: all
    for query in ("limit=0", "offset=-1", "offset=x"):
        status, reply = _call(f"{url}/api/batches/{batch_id}?{query}")
        assert status == 400 and "whole number" in reply["error"]
    overlay = sliced["samples"][0]["overlay"]
    assert [(s["kind"], s["label"], s["cited"]) for s in overlay] == [
        ("instance", "red", True),
        ("text", "EXIT", True),
    ]
    assert overlay[0]["box"] == [10.0, 10.0, 60.0, 50.0]


def test_a_reviewer_page_shows_pace_kinds_and_agreement_with_each_other_reviewer(long_batch):
    from benchfoundry.decisions.reviews import Decision, record

    run, url, _ = long_batch
    day = "2026-12-01T"
    mine = [
        Decision("q000", "ann", "accept", decided_at=day + "10:00:00.0Z", lead_time_s=4),
        Decision("q001", "ann", "accept", decided_at=day + "10:01:00.0Z", lead_time_s=6),
        Decision("q002", "ann", "reject", reason="ambiguous", decided_at=day + "10:02:00.0Z",
                 lead_time_s=8),
        Decision("q003", "ann", "fix_answer", new_answer="B", decided_at=day + "14:00:00.0Z",
                 lead_time_s=10),
        Decision("q003", "ann", "accept", decided_at=day + "14:00:30.0Z", lead_time_s=100),
        Decision("q000", "bo", "accept", decided_at=day + "11:00:00.0Z"),
        Decision("q001", "bo", "fix_answer", new_answer="C", decided_at=day + "11:00:10.0Z"),
        Decision("q001", "<lead>", "accept", adjudication=True, decided_at=day + "12:00:00.0Z"),
    ]  # fmt: skip
    added, _, refused = record(run, mine, "web")
    assert (added, refused) == (8, [])
    status, ann = _call(url + "/api/reviewers/ann")
    assert status == 200 and ann["pace"]["decisions"] == 5
    assert (ann["pace"]["active_s"], ann["pace"]["sessions"]) == (150.0, 2)
    assert ann["pace"]["per_hour"] == 72.0 and ann["pace"]["median_lead_time_s"] == 8
    assert ann["by_kind"] == {"accept": 3, "reject": 1} and ann["questions"] == 4
    assert ann["agreement"] == [{"reviewer": "bo", "items": 2, "agreement": 0.5, "kappa": 0.0}]
    assert [b["decided"] for b in ann["batches"]] == [4]
    page = _call(url + "/reviewers/ann")[1]
    assert "72.0" in page and 'href="/reviewers/bo"' in page and "reject" in page
    lead = _call(url + "/api/reviewers/%3Clead%3E")[1]
    assert lead["adjudications"] == 1 and lead["by_kind"] == {}
    assert "&lt;lead&gt;" in _call(url + "/reviewers/%3Clead%3E")[1]
    assert _call(url + "/api/reviewers/nobody")[0] == 404
    assert _fetch(url + "/reviewers/nobody")[0] == 404
    assert 'href="/reviewers/ann"' in _call(url + "/")[1]  # linked from the batch list


def test_the_queue_puts_the_longest_waiting_conflict_first_with_its_evidence(long_batch):
    from benchfoundry.decisions.reviews import Decision, record

    run, url, _ = long_batch
    day = "2026-12-01T"
    record(
        run,
        [
            Decision("q004", "ann", "accept", decided_at=day + "09:00:00.0Z"),
            Decision("q004", "bo", "fix_answer", new_answer="B", decided_at=day + "11:00:00.0Z"),
            Decision("q005", "ann", "accept", decided_at=day + "09:30:00.0Z"),
            Decision("q005", "bo", "reject", reason="blurry", decided_at=day + "10:00:00.0Z"),
        ],
        "web",
    )
    conflicts = _call(url + "/api/conflicts")[1]["conflicts"]
    assert [c["question_id"] for c in conflicts] == ["q005", "q004"]
    assert conflicts[0]["since"] == day + "10:00:00.0Z"
    assert [s["label"] for s in conflicts[0]["overlay"] if s["cited"]] == ["red", "EXIT"]
    page = _call(url + "/conflicts")[1]
    assert "2 conflicts left" in page and page.index('"q005"') < page.index('"q004"')
    assert page.count('class="decision"') == 4 and "blurry" in page
