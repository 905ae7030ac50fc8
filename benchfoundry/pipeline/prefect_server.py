"""Prefect's embedded server, started by the CLI so that a killed run's server does not outlive it.

With no API URL configured, Prefect starts a temporary server (a uvicorn subprocess) on first use
and stops it when the process exits normally; a SIGKILL skips that and leaves the server
listening. So the commands that run flows start that same server themselves, record its pid
beside their own in `PREFECT_HOME/benchfoundry-servers/`, and every later start first stops each
recorded server whose owner is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

log = logging.getLogger(__name__)
RECORDS = "benchfoundry-servers"

# The embedded server's recording, in bigger batches than Prefect's defaults (one task run state
# a transaction, events 20 at a time). Its work per task run then falls from about 40 ms of CPU
# to 13, and a stage flow of 20 no-op tasks from a median of 2.3 s to 0.44 s
# (`bench/flow_overhead.py`), on the cores the models use. Batches are written when full, every
# 5 s, and when the server stops. With the defaults, a command that ended soon after its last
# task often left some task runs unrecorded or not in their final state (the recorder's backlog
# was dropped at shutdown); the test in tests/benchfoundry/cli/test_cli_process.py reads every one
# back. A value set in the environment, under its name or Prefect's older
# `PREFECT_API_SERVICES_...` one, wins; a killed server loses its last seconds of records anyway.
SERVER_BATCHES = {
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "100",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE": "200",
}


def _process(pid: int, started: float) -> psutil.Process | None:
    """The live process with this pid and start time (a reused pid is another process)."""
    try:
        process = psutil.Process(pid)
        if abs(process.create_time() - started) > 1.0 or process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process
    except psutil.Error:
        return None


def reap_orphans(home: Path) -> list[int]:
    """Stop every recorded server whose owning command is no longer running; return their pids."""
    stopped = []
    for record in sorted((home / RECORDS).glob("*.json")):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            owner = _process(data["owner_pid"], data["owner_started"])
            server = _process(data["server_pid"], data["server_started"])
        except (OSError, ValueError, KeyError, TypeError):
            record.unlink(missing_ok=True)
            continue
        if owner is not None:
            continue  # another command is using it
        if server is not None:
            log.info("stopping Prefect server %s left by a killed run", data["server_pid"])
            server.terminate()
            try:
                server.wait(timeout=10)
            except psutil.TimeoutExpired:
                server.kill()
            stopped.append(data["server_pid"])
        record.unlink(missing_ok=True)
    return stopped


def _api_configured() -> bool:
    from prefect.settings import PREFECT_API_URL

    return bool(PREFECT_API_URL.value())


@contextlib.contextmanager
def _own_session() -> Iterator[None]:
    """Processes started in the block get a session of their own. Ctrl-C on a terminal signals
    the whole foreground process group: the server, in it, would stop at once while the command
    that asked its work to stop still needs it to record the end (`core.interrupt`). Prefect
    starts the server with `subprocess.Popen` and takes no options for it, hence the wrapper,
    in force only while the server starts; the server still stops when the command exits."""
    original = subprocess.Popen

    class Popen(original):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("start_new_session", True)
            super().__init__(*args, **kwargs)

    subprocess.Popen = Popen  # type: ignore[misc]
    try:
        yield
    finally:
        subprocess.Popen = original  # type: ignore[misc]


@contextlib.contextmanager
def embedded_server() -> Iterator[str | None]:
    """Start Prefect's temporary server for this command (unless an API URL is configured, as
    with a real server or the test harness) and record it; yield its API URL. The server stops
    when the process exits, as Prefect's own would."""
    if _api_configured():
        yield None
        return
    from prefect.server.api.server import SubprocessASGIServer

    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect")
    reap_orphans(home)
    me = psutil.Process()
    record = home / RECORDS / f"{me.pid}.json"
    # Prefect stops its server at exit, after its log and event workers have drained (they would
    # hang retrying a server stopped earlier). Exit handlers run last-registered first, so the
    # record, registered before the server starts, is removed once the server is gone.
    atexit.register(record.unlink, missing_ok=True)
    server = SubprocessASGIServer()  # the instance Prefect's client uses when no URL is set
    added = {
        name: value
        for name, value in SERVER_BATCHES.items()
        if name not in os.environ
        and name.replace("PREFECT_SERVER_", "PREFECT_API_", 1) not in os.environ
    }
    os.environ.update(added)  # read by the server's process when it starts, then taken back
    try:
        with _own_session():
            server.start()
    finally:
        for name in added:
            os.environ.pop(name, None)
    assert server.server_process is not None
    child = psutil.Process(server.server_process.pid)
    from benchfoundry.storage.atomic import atomic_write_json

    atomic_write_json(  # another command's reaper never reads it half-written
        record,
        {
            "owner_pid": me.pid,
            "owner_started": me.create_time(),
            "server_pid": child.pid,
            "server_started": child.create_time(),
            "api_url": server.api_url,
        },
    )
    yield server.api_url


@contextlib.contextmanager
def nested_flows() -> Iterator[None]:
    """Flows called in this block from another flow (a build's stage flows, the `qc` command's
    steps, the stage flow a `publish-run` or `evaluate-*` flow ends in) start no heartbeat thread
    of their own. They run in the process of the flow that calls them, whose heartbeats already
    say that process is alive; and ending a flow stops its heartbeat thread by waiting out that
    thread's one-second sleep: an empty stage flow took 1.14 s with it, 0.12 s without
    (`bench/flow_overhead.py`).
    What is lost: a process killed mid-stage leaves the stage's flow run `Running` where
    heartbeat-based crash detection marks only the calling flow `Crashed`."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield
