"""The Label Studio round trip against a real Label Studio server on 127.0.0.1: a project made
through its HTTP API with our labelling configuration, our tasks imported, annotations posted,
the project exported as JSON and that export imported into `reviews`.

Label Studio pins its own Django, numpy and pyarrow, so it lives in an environment of its own:
the test runs where `BENCHFOUNDRY_LABEL_STUDIO` names its `label-studio` executable (or one is on
PATH), and is skipped with that reason elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

TOKEN = "benchfoundry-test-token-0123456789abcdef"
EXECUTABLE = os.environ.get("BENCHFOUNDRY_LABEL_STUDIO") or shutil.which("label-studio")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not EXECUTABLE,
        reason="Label Studio is not installed (set BENCHFOUNDRY_LABEL_STUDIO to its executable)",
    ),
]


def _api(url: str, path: str, body: object | None = None, method: str | None = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method=method or ("POST" if data else "GET"),
        headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    executable = str(EXECUTABLE)
    home = tmp_path_factory.mktemp("label-studio")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(home),
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "false",
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",  # for the --user-token it starts with
    }
    log = open(home / "server.log", "wb")  # noqa: SIM115 - open for the server's lifetime
    server = subprocess.Popen(
        [executable, "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(home), "--username", "ann@example.org", "--password", "benchfoundry-pw",
         "--user-token", TOKEN],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                _api(url, "/api/projects")
                break
            except (OSError, urllib.error.HTTPError):
                if server.poll() is not None or time.monotonic() > deadline:
                    tail = (home / "server.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"Label Studio did not start:\n{tail}") from None
                time.sleep(2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_tasks_go_to_label_studio_and_its_export_comes_back_as_reviews(
    label_studio,
    tmp_path,
    image_bytes,
    store_raw_image,
    candidate_record,
    scored_record,
    prefect_api,
):
    from typer.testing import CliRunner

    from benchfoundry.cli import app
    from benchfoundry.core.records import CandidateRecord, ReviewRecord, ScoredRecord
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
    from benchfoundry.tasks.review.stage import export_batches

    run = RunFolder(tmp_path / "run")
    image = store_raw_image(run, image_bytes())
    run.table(CandidateRecord).append(
        [candidate_record(f"q{i}", image, dimension="ocr") for i in range(2)]
    )
    run.table(ScoredRecord).append(
        [scored_record(f"q{i}", image, dimension="ocr", hits_text=i) for i in range(2)]
    )
    export_batches(str(run.root), ReviewOptions(reviewers=[Reviewer(name="ann")]), "s")
    runner = CliRunner()
    batch = json.loads(
        runner.invoke(app, ["review", "status", "--out", str(run.root), "--json"]).stdout
    )["batches"][0]["batch_id"]
    to = tmp_path / "ls" / "tasks.json"
    assert (
        runner.invoke(
            app,
            [
                "review",
                "labelstudio",
                "export",
                "--out",
                str(run.root),
                "--batch",
                batch,
                "--to",
                str(to),
            ],
        ).exit_code
        == 0
    )
    config = (to.parent / "label_config.xml").read_text()
    project = _api(
        label_studio, "/api/projects", {"title": "benchfoundry review", "label_config": config}
    )
    _api(label_studio, f"/api/projects/{project['id']}/import", json.loads(to.read_text()))
    tasks = _api(label_studio, f"/api/tasks?project={project['id']}")
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    by_question = {t["data"]["question_id"]: t for t in tasks}
    results = {
        "q0": [{"from_name": "decision", "to_name": "question", "type": "choices", "value": {"choices": ["accept"]}}],
        "q1": [
            {"from_name": "decision", "to_name": "question", "type": "choices", "value": {"choices": ["fix_answer"]}},
            {"from_name": "answer", "to_name": "question", "type": "choices", "value": {"choices": ["C"]}},
        ],
    }  # fmt: skip
    for qid, result in results.items():
        _api(
            label_studio,
            f"/api/tasks/{by_question[qid]['id']}/annotations",
            {"result": result, "lead_time": 3.5},
        )
    export = _api(label_studio, f"/api/projects/{project['id']}/export?exportType=JSON")
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(export))
    imported = json.loads(
        runner.invoke(
            app, ["review", "import", str(exported), "--out", str(run.root), "--json"]
        ).stdout
    )
    assert (imported["tool"], imported["added"], imported["refused"]) == ("labelstudio", 2, [])
    reviews = {r.question_id: r for r in run.table(ReviewRecord).records()}
    assert reviews["q0"].decision == "accept" and reviews["q1"].new_answer == "C"
    # Label Studio exports the annotator as a user id: the task's reviewer is kept.
    assert {r.reviewer for r in reviews.values()} == {"ann"}
    assert all(r.batch_id == batch for r in reviews.values())
