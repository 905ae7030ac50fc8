"""The Label Studio round trip against a real Label Studio server on 127.0.0.1: two annotators
made through its HTTP API, a project with our labelling configuration, our tasks imported, each
annotator's decisions posted (an accept, a fix of the answer, a rejection with its reason), the
project exported as JSON and that export imported into `reviews` as two reviewers.

Label Studio pins its own Django and numpy, so it lives in a venv of its own, made once per
machine in the user's cache (`${XDG_CACHE_HOME:-~/.cache}/benchfoundry/venv-label-studio`, about
1 GB, two and a half minutes from the registry) with a migrated SQLite database beside it (its
migrations take a minute; a copy starts in about 10 s). `BENCHFOUNDRY_LABEL_STUDIO` names another
`label-studio` executable instead. Skipped only where the package registry cannot be reached."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchfoundry.devtools.cached_venv import (
    RegistryUnreachable,
    build_once,
    cache_root,
    cached_venv,
)

# The first run on a machine builds the venv and the database (minutes); later ones take seconds.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]
PINS = ["label-studio==1.23.2"]
TOKEN = "benchfoundry-test-token-0123456789abcdef"
# Offline and quiet: no check of the registry for a newer release at start; the legacy token
# for the --user-token it starts with.
QUIET = {"LATEST_VERSION_CHECK": "false", "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true"}


def _executable() -> str:
    override = os.environ.get("BENCHFOUNDRY_LABEL_STUDIO")
    if override:
        if not (shutil.which(override) or os.access(override, os.X_OK)):
            pytest.fail(f"BENCHFOUNDRY_LABEL_STUDIO={override} is not an executable")
        return override
    try:
        venv = cached_venv("venv-label-studio", PINS)
    except RegistryUnreachable as exc:
        pytest.skip(f"Label Studio cannot be installed: the package registry cannot be reached ({str(exc).splitlines()[0]})")  # fmt: skip
    return str(venv / "bin" / "label-studio")


def _migrated_database(executable: str) -> Path:
    """A SQLite database with Label Studio's migrations applied, made once per machine and
    executable (`label-studio version` migrates and exits)."""
    key = hashlib.sha256(os.path.realpath(executable).encode()).hexdigest()[:12]

    def build(folder: Path) -> None:
        folder.mkdir(parents=True)
        done = subprocess.run(
            [executable, "version", "--data-dir", str(folder)],
            env={**os.environ, **QUIET, "LABEL_STUDIO_BASE_DATA_DIR": str(folder)},
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"Label Studio's migrations failed:\n{done.stderr[-3000:]}")

    folder = build_once(cache_root() / f"label-studio-db-{key}", " ".join(PINS), build)
    return folder / "label_studio.sqlite3"


def _api(url: str, path: str, body: object | None = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url + path, data=data, method="POST" if data else "GET",
        headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"{path}: {exc.code} {exc.read()[:1000]!r}") from None
    return json.loads(raw) if raw else None


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    """The server's URL; one server for the module, stopped with its process group after it."""
    executable = _executable()
    home = tmp_path_factory.mktemp("label-studio")
    shutil.copyfile(_migrated_database(executable), home / "label_studio.sqlite3")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, **QUIET, "LABEL_STUDIO_BASE_DATA_DIR": str(home)}
    log = open(home / "server.log", "wb")  # noqa: SIM115 - open for the server's lifetime
    server = subprocess.Popen(
        [executable, "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(home), "--username", "admin@example.org",
         "--password", "benchfoundry-pw", "--user-token", TOKEN],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:  # the admin and its token exist before the server listens
                with urllib.request.urlopen(url + "/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (home / "server.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"Label Studio did not start:\n{tail}")
            time.sleep(0.25)
        yield url
    finally:
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 20)):
            try:
                os.killpg(server.pid, sig)
                server.wait(timeout=wait)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        log.close()


def _choices(name: str, value: str) -> dict:
    return {"from_name": name, "to_name": "question", "type": "choices",
            "value": {"choices": [value]}}  # fmt: skip


def _export_with_emails(url: str, project: int) -> list:
    """A snapshot export whose annotations name the annotator (id and e-mail)."""
    options = {"annotations__completed_by": {"only_id": False}}
    snapshot = _api(url, f"/api/projects/{project}/exports", {"serialization_options": options})
    deadline = time.monotonic() + 120
    while snapshot["status"] not in ("completed", "failed") and time.monotonic() < deadline:
        time.sleep(0.25)
        snapshot = _api(url, f"/api/projects/{project}/exports/{snapshot['id']}")
    assert snapshot["status"] == "completed", snapshot
    return _api(url, f"/api/projects/{project}/exports/{snapshot['id']}/download?exportType=JSON")


def test_two_annotators_in_label_studio_come_back_as_two_reviewers(
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

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, [*args, "--out", str(run.root)])
        return result.exit_code, result.output

    batch = json.loads(cli("review", "status", "--json")[1])["batches"][0]["batch_id"]
    to = tmp_path / "ls" / "tasks.json"
    assert cli("review", "labelstudio", "export", "--batch", batch, "--to", str(to))[0] == 0

    # Two annotators, made through Label Studio's API, annotate every task of the batch.
    users = {
        name: _api(label_studio, "/api/users/", {"email": f"{name}@example.org", "username": name})
        for name in ("ann", "bo")
    }
    config = (to.parent / "label_config.xml").read_text()
    body = {"title": "benchfoundry review", "label_config": config}
    project = _api(label_studio, "/api/projects", body)["id"]
    _api(label_studio, f"/api/projects/{project}/import", json.loads(to.read_text()))
    tasks = _api(label_studio, f"/api/tasks?project={project}")
    tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
    task_of = {t["data"]["question_id"]: t["id"] for t in tasks}
    reason = {"from_name": "reason", "to_name": "question", "type": "textarea",
              "value": {"text": ["the picture shows no text"]}}  # fmt: skip
    annotations = {
        ("ann", "q0"): [_choices("decision", "accept")],
        ("ann", "q1"): [_choices("decision", "fix_answer"), _choices("answer", "C")],
        ("bo", "q0"): [_choices("decision", "reject"), reason],
        ("bo", "q1"): [_choices("decision", "fix_answer"), _choices("answer", "C")],
    }
    for (name, qid), result in annotations.items():
        body = {"result": result, "completed_by": users[name]["id"], "lead_time": 3.5}
        _api(label_studio, f"/api/tasks/{task_of[qid]}/annotations", body)

    # The export that names the annotators by e-mail, imported with a map to our reviewers.
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(_export_with_emails(label_studio, project)))
    names = tmp_path / "reviewers.json"
    names.write_text(json.dumps({"ann@example.org": "ann", "bo@example.org": "bo"}))
    code, output = cli("review", "import", str(exported), "--reviewers-map", str(names), "--json")
    first = json.loads(output)
    assert (code, first["tool"], first["added"], first["refused"]) == (0, "labelstudio", 4, [])
    reviews = {(r.question_id, r.reviewer): r for r in run.table(ReviewRecord).records()}
    assert set(reviews) == {("q0", "ann"), ("q0", "bo"), ("q1", "ann"), ("q1", "bo")}
    assert reviews["q0", "ann"].decision == "accept"
    assert (reviews["q0", "bo"].decision, reviews["q0", "bo"].reason) == (
        "reject",
        "the picture shows no text",
    )
    assert {reviews["q1", who].new_answer for who in ("ann", "bo")} == {"C"}
    assert all(r.batch_id == batch and r.lead_time_s == 3.5 for r in reviews.values())
    assert all(r.tool == "labelstudio" for r in reviews.values())

    # Importing the same export again changes nothing.
    again = json.loads(
        cli("review", "import", str(exported), "--reviewers-map", str(names), "--json")[1]
    )
    assert (again["added"], again["already_stored"], again["refused"]) == (0, 4, [])
    # Label Studio's plain export names annotators by user id only: two of them on one
    # reviewer's tasks are refused rather than merged, and named by id they are the same four.
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_api(label_studio, f"/api/projects/{project}/export?exportType=JSON")))  # fmt: skip
    code, output = cli("review", "import", str(plain))
    assert code == 1 and "by id only" in output and "--reviewers-map" in output
    names.write_text(json.dumps({str(users[n]["id"]): n for n in ("ann", "bo")}))
    by_id = json.loads(cli("review", "import", str(plain), "--reviewers-map", str(names), "--json")[1])  # fmt: skip
    assert (by_id["added"], by_id["already_stored"]) == (0, 4)
    assert len(run.table(ReviewRecord).records()) == 4
    status = json.loads(cli("review", "status", "--json")[1])
    assert status["conflicts"] == ["q0"]  # ann accepted what bo rejected
