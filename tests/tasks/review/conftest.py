"""The review app's fixtures: a run folder with three candidates batched for one reviewer, and
serving an app over real HTTP (uvicorn on 127.0.0.1, a free port, stopped after the test)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import uvicorn

from benchfoundry.core.records import CandidateRecord, ScoredRecord
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder
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
    store = ReviewStore.open(run)
    for name, role in USERS.items():
        store.add_user(name, role, token=token_of(name))
    return run


# The review app's users in every test run: two annotators (ann has the batch), an adjudicator
# and an admin, each with a known token.
USERS = {"ann": "annotator", "bo": "annotator", "lead": "adjudicator", "chief": "admin"}


def token_of(name: str) -> str:
    return f"{name}-token-for-the-review-tests-0123456789"


@pytest.fixture
def bo_cross_checks(run) -> RunFolder:
    """The run with a second reviewer: bo cross-checks ann's three questions."""
    from benchfoundry.core.records import ReviewBatchRecord

    run.table(ReviewBatchRecord).append(
        [
            ReviewBatchRecord(
                batch_id="bo-cross-check",
                reviewer="bo",
                dimension="ocr",
                part=1,
                question_ids=["q0", "q1", "q2"],
                cross_check=True,
                created_at="2026-12-03T00:00:00Z",
                spec_hash="s",
            )  # fmt: skip
        ]
    )
    return run


@pytest.fixture(scope="module")
def module_servers() -> Iterator[dict[str, tuple]]:
    """Run folders served once per test module: a fixture keeps `(run, url, process)` here under
    its name for the module's later tests, and each process is stopped after the module's last
    test. A run and its `review serve` take seconds to build and start; the tests that share
    one decide on different items, so none depends on another's order."""
    made: dict[str, tuple] = {}
    yield made
    for _, _, server in made.values():
        server.terminate()
        server.wait(timeout=20)


@pytest.fixture
def tokens() -> dict[str, str]:
    return {name: token_of(name) for name in USERS}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def serve_app() -> Iterator[Callable[[object], str]]:
    """`serve_app(app)` serves an ASGI app on 127.0.0.1 and returns its base URL."""
    running: list[tuple[uvicorn.Server, threading.Thread]] = []

    def serve(app: object) -> str:
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        running.append((server, thread))
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield serve
    for server, thread in running:
        server.should_exit = True
        thread.join(timeout=10)


def labelstudio_export(run: RunFolder, batch_id: str, to) -> list[dict]:
    """`benchfoundry review labelstudio export` of a batch, as a user runs it: the tasks."""
    import json

    from typer.testing import CliRunner

    from benchfoundry.cli import app

    result = CliRunner().invoke(
        app,
        ["review", "labelstudio", "export", "--out", str(run.root), "--batch", batch_id,
         "--to", str(to)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(to.read_text(encoding="utf-8"))
