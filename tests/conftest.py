"""Shared fixtures. Prefect's home goes to a temporary folder before Prefect is imported, and flow
tests, and the commands tests start as processes, run against one real `prefect server` on
127.0.0.1 for the whole session."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="benchfoundry-prefect-")
from benchfoundry.core import env  # noqa: E402

env.configure()

import pytest  # noqa: E402
from PIL import Image  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


# The test files that take longest (over 30 s of a worker's time each, measured 2026-12-07 on
# the 2-core machine, the demo's, the thread/Dask/Ray and the command-line files after their
# trims the same day), longest first. `make test` hands files to its two workers in collection
# order (`--no-loadscope-reorder`): these go first, so that the workers end together rather
# than one waiting on a long file handed out last.
SLOWEST_FIRST = [
    "flows/test_build_reliability.py",
    "flows/test_task_runners.py",
    "extractors/test_sam_backend.py",
    "benchfoundry/cli/test_cli_process.py",
    "flows/test_video_build.py",
    "tasks/evaluate/test_evaluate_failures.py",
    "flows/test_deployments.py",
    "flows/test_build_flow.py",
    "test_installed_package.py",
    "flows/test_object_storage.py",
    "tasks/translate/test_translate.py",
    "benchfoundry/gateway/test_local_smollm2.py",
    "tasks/evaluate/test_language_boards.py",
    "tasks/generate/test_generate.py",
    "tasks/publish/test_publish_vlmevalkit_live.py",
    "tasks/publish/test_publish.py",
    "benchfoundry/cli/test_first_contact.py",
    "tasks/publish/test_publish_lmms_eval_live.py",
    "benchfoundry/gateway/test_families.py",
    "tasks/evaluate/test_open_sets.py",
    "tasks/review/test_app_browser.py",
    "benchfoundry/devtools/test_invariance.py",
    "tasks/ingest/test_ingest_as_shown.py",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (in SLOWEST_FIRST's order), the rest as collected."""
    rank = {name: n for n, name in enumerate(SLOWEST_FIRST)}

    def place(item: pytest.Item) -> int:
        path = Path(str(item.path))
        if not path.is_relative_to(REPO / "tests"):  # a test file given from elsewhere
            return len(rank)
        return rank.get(path.relative_to(REPO / "tests").as_posix(), len(rank))

    items.sort(key=place)  # stable: a file's tests keep their order


@pytest.fixture(scope="session")
def prefect_api(prefect_server) -> Iterator[None]:
    """A real Prefect API for flow runs in this process: the session's Prefect server, which the
    commands the tests start as processes use too (one server per worker, not a second one of
    `prefect_test_harness`'s)."""
    import prefect.context
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url, _ = prefect_server
    with (
        temporary_settings(updates={PREFECT_API_URL: url}),
        # as the harness does: code in a context copied earlier sees the server too
        prefect.context._temporary_global_settings_context(prefect.context.get_settings_context()),
    ):
        yield
        _log_to_live_streams()
        # The flow runs' logs and events reach the server before it stops (else "All connection
        # attempts failed" as the process exits).
        with contextlib.suppress(RuntimeError):  # a worker that never started
            APILogWorker.drain_all()
        EventsWorker.drain_all()


_NO_LOCK = contextlib.nullcontext()


def _log_to_live_streams() -> None:
    """Before the session ends (Prefect's log workers still write as the process exits), point
    Prefect's console handlers (rich consoles made on the stream of their day: pytest's
    capture, a CLI runner's buffer, closed by then) at the process's own stderr, and any other
    stream handler whose stream is closed; this printed a '--- Logging error ---' traceback at
    the end of the suite. Other handlers (pytest's own log capture) are left as they are. Set
    under each handler's lock, with no flush of the old stream."""
    import logging

    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if not isinstance(handler, logging.StreamHandler):
                continue
            console = getattr(handler, "console", None)
            with handler.lock or _NO_LOCK:
                if console is not None and hasattr(console, "file"):
                    console.file = sys.__stderr__
                elif not getattr(handler.stream, "closed", False):
                    continue
                with contextlib.suppress(AttributeError):  # a stream that is a property
                    handler.stream = sys.__stderr__


@pytest.fixture
def image_bytes() -> Callable[..., bytes]:
    """Encode a small picture: a gradient with a coloured block, distinct per `seed`."""

    def make(size: tuple[int, int] = (96, 72), fmt: str = "PNG", seed: int = 0) -> bytes:
        width, height = size
        image = Image.linear_gradient("L").resize(size).convert("RGB")
        block = (seed * 37 % 200, 255 - seed * 53 % 200, seed * 91 % 255)
        x = (seed * 13) % max(1, width - width // 3)
        image.paste(block, (x, height // 4, x + width // 3, height // 4 + height // 3))
        if seed % 2:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        buffer = io.BytesIO()
        image.save(buffer, format=fmt)
        return buffer.getvalue()

    return make


@pytest.fixture
def store_raw_image() -> Callable[..., str]:
    """Put bytes into a run's `images` table as they are, bypassing ingestion's checks (for
    tests that need an image ingestion would refuse, or one with chosen bytes); return its id."""
    from benchfoundry.core.ids import image_id
    from benchfoundry.core.records import ImageRecord

    def store(run, data: bytes, source: str = "test", size: tuple[int, int] = (8, 8)) -> str:
        record = ImageRecord(
            image_id=image_id(data),
            source=source,
            source_kind="folder",
            width=size[0],
            height=size[1],
            format="PNG",
            mode="RGB",
            n_bytes=len(data),
            phash="0" * 16,
            duplicate_of=None,
            duplicate_distance=None,
            license=None,
            meta={},
            bytes=data,
        )
        run.table(ImageRecord).append([record])
        return record.image_id

    return store


@pytest.fixture
def candidate_record() -> Callable[..., object]:
    """A `CandidateRecord` for tests: a generic four-option question, any field overridden."""
    from benchfoundry.core.records import CandidateRecord

    def make(question_id: str, image_id: str, **fields: object) -> CandidateRecord:
        values: dict[str, object] = {
            "question_id": question_id,
            "image_id": image_id,
            "dimension": "d",
            "question": f"Question {question_id}?",
            "hint": None,
            "options": [f"{question_id}-{j}" for j in range(4)],
            "answer": "A",
            "category": None,
            "l2_category": None,
            "split": None,
            "generator": "test",
            "prompt_id": None,
            "prompt_hash": None,
            "evidence": [],
            "source": "test",
            "meta": {},
            "raw_output": None,
        }
        return CandidateRecord(**{**values, **fields})

    return make


@pytest.fixture
def scored_record() -> Callable[..., object]:
    """A `ScoredRecord` for tests: a selected question with no hits, any field overridden."""
    from benchfoundry.core.records import ScoredRecord

    def make(question_id: str, image_id: str, **fields: object) -> ScoredRecord:
        values: dict[str, object] = {
            "question_id": question_id,
            "image_id": image_id,
            "dimension": "d",
            "answer": "A",
            "hits_text": 0,
            "hits_text_circular": None,
            "n_text_models": 3,
            "text_hit_by": [],
            "hits_vlm": 0,
            "hits_vlm_circular": None,
            "n_vlm_models": 1,
            "vlm_hit_by": [],
            "flags": [],
            "difficulty": None,
            "decision": "selected",
            "reason": "test",
            "rank": None,
        }
        return ScoredRecord(**{**values, **fields})

    return make


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """A real Prefect server on 127.0.0.1, with its own home; stopped afterwards."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
    }
    env.pop("PREFECT_API_URL", None)
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "prefect"),
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("prefect server did not start")
            time.sleep(0.5)
        _backup(home / "prefect.db", tmp_path_factory.getbasetemp() / PRISTINE_DB)
        yield url, env
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


# The session server's database as it was when the server had started: migrated, no run in it.
PRISTINE_DB = "prefect-pristine.db"


def _backup(source: Path, copy: Path) -> None:
    """A consistent copy of an SQLite database that a server has open (SQLite's backup)."""
    import sqlite3

    with (
        contextlib.closing(sqlite3.connect(source)) as db,
        contextlib.closing(sqlite3.connect(copy)) as into,
    ):
        db.backup(into)


@pytest.fixture(scope="session")
def migrated_prefect_home(prefect_server, tmp_path_factory) -> Callable[[Path], Path]:
    """Make a Prefect home whose database is already migrated and holds no run: a copy of the
    session server's database as it was at its start. A command's own embedded server then
    starts in seconds instead of migrating a fresh database (about 8 s of CPU, 20 s and more
    on the loaded 2-core machine). Tests of a user's very first command keep an empty home."""
    pristine = tmp_path_factory.getbasetemp() / PRISTINE_DB

    def make(home: Path) -> Path:
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pristine, home / "prefect.db")
        return home

    return make


@pytest.fixture(scope="session", autouse=True)
def commands_use_the_session_server(prefect_server) -> Iterator[None]:
    """Commands the tests start as processes talk to the session's real Prefect server (its URL
    in the environment they inherit) rather than each starting a temporary server of its own:
    a one-stage build took 9.2 s with its own, 3.4 s without. Tests of the temporary server
    itself, and the builds that must run as a user's first one, leave PREFECT_API_URL out of
    their commands' environment. This process's own Prefect read its settings when it was
    imported, before this, and keeps them (flow tests use `prefect_api`)."""
    import prefect  # noqa: F401  (its settings are read now, without the URL)

    url, _ = prefect_server
    os.environ["PREFECT_API_URL"] = url
    yield
    os.environ.pop("PREFECT_API_URL", None)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Callable[[], str]]:
    """A real PostgreSQL 15 server on 127.0.0.1 for the session; calling the fixture's value
    makes a fresh, empty database and returns its URL."""
    from benchfoundry.devtools.postgres import PostgresMissing, temporary_postgres

    try:
        with temporary_postgres() as server:
            yield server.fresh
    except PostgresMissing as exc:
        pytest.skip(str(exc))


# The venv with the torch/torchvision pair that imports together (torch 2.14.1, torchvision
# 0.29.1) and segment-anything: outside the checkout (a copy of the tree must not carry 5.5 GB),
# in the user's cache, made once per machine and pins (see devtools.cached_venv).
TORCHVISION_PINS = ["torch==2.14.1", "torchvision==0.29.1", "segment-anything==1.0"]


@pytest.fixture(scope="session")
def torchvision_python() -> Path:
    """Its python, with benchfoundry and the rest of the default venv after its own packages
    (the default venv's site folder added as a site directory, for its editable install)."""
    import site

    from benchfoundry.devtools.cached_venv import cache_root, cached_venv

    venv = cache_root() / "venv-sam"
    python = cached_venv(venv.name, TORCHVISION_PINS, timeout_s=1200) / "bin" / "python"
    ours = next(p for p in site.getsitepackages() if p.endswith("site-packages"))
    (venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
     / "zz-benchfoundry.pth").write_text(f"import site; site.addsitedir({ours!r})\n")  # fmt: skip
    return python
