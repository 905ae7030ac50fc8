"""The command line as a user runs it, in its own process with its own Prefect home: endpoint
credentials never reach a file or an output, and a run killed with SIGKILL leaves no Prefect
server behind once the next command starts."""

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from benchfoundry.devtools.testserver import Script, TestServer

REPO = Path(__file__).resolve().parents[3]
SECRET = "s3cr3t-Pa55word"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory, migrated_prefect_home) -> Path:
    """One Prefect home for the module, its database already migrated (a copy of the session
    server's, from before any run): the commands' own servers start without migrating it."""
    return migrated_prefect_home(tmp_path_factory.mktemp("prefect-home"))


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(
        PREFECT_HOME=str(home),
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120",
    )
    return env


def _cli(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchfoundry", *args],
        capture_output=True,
        text=True,
        env=_env(home),
        cwd=REPO,
        timeout=timeout,
    )


def _corpus(folder: Path, image_bytes) -> Path:
    """Two images and a TSV of three seed questions about them."""
    folder.mkdir(parents=True)
    for k in range(2):
        (folder / f"img{k}.png").write_bytes(image_bytes(seed=k))
    with open(folder / "q.tsv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["index", "image_path", "question", "A", "B", "C", "answer", "category"])
        writer.writerow(["1", "img0.png", "What is shown?", "a cat", "a dog", "a fox", "A", "x"])
        writer.writerow(["2", "img1.png", "Which colour?", "red", "green", "blue", "C", "x"])
        writer.writerow(["3", "img1.png", "How many?", "one", "two", "three", "B", "x"])
    return folder


def _files_holding(root: Path, needle: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    )


def test_endpoint_credentials_reach_no_file_log_or_output(tmp_path, image_bytes, prefect_home):
    corpus = _corpus(tmp_path / "corpus", image_bytes)
    run = tmp_path / "run"
    with TestServer(Script(default="A")) as server:
        url = server.base_url.replace("http://", f"http://user:{SECRET}@")
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            "name: secret\n"
            "sources: [{kind: tsv, path: corpus/q.tsv}]\n"
            "stages: [ingest, filter, select]\n"
            "options: {filter: {blind: [blind/longest], chance: [blind/random]}}\n"
            f"models: {{text_only: ['openai/m@{url}'], judge: ['openai/judge@{url}?key={SECRET}']}}\n"
            f"output: {run}\n",
            encoding="utf-8",
        )
        built = _cli(prefect_home, "build", str(spec), "--json", "--verbose")
        assert built.returncode == 0, built.stderr[-3000:]
        again = _cli(
            prefect_home,
            "qc",
            "--out",
            str(run),
            "--spec",
            str(spec),
            "--steps",
            "filter,select",
            "--text-only",
            f"openai/m@{url}",
            "--json",
            "-v",
        )
        assert again.returncode == 0, again.stderr[-3000:]
        listed = _cli(prefect_home, "models", "--check", f"openai/m@{url}")
        assert listed.returncode == 0, listed.stderr[-3000:]
        # The credential was used on the wire (HTTP basic auth from the URL).
        assert server.stats.requests > 0
        assert all(h.get("authorization", "").startswith("Basic ") for h in server.stats.headers)
    assert "openai/m@http://***@127.0.0.1" in built.stdout
    assert corpus.exists()
    for needle in (SECRET.encode(), f"user:{SECRET}".encode()):
        assert _files_holding(run, needle) == []
        assert _files_holding(prefect_home, needle) == []
        for output in (built, again, listed):
            assert needle.decode() not in output.stdout + output.stderr


def test_a_killed_runs_prefect_server_is_stopped_by_the_next_command(
    tmp_path, image_bytes, prefect_home
):
    corpus = _corpus(tmp_path / "corpus", image_bytes)
    records = prefect_home / "benchfoundry-servers"
    owner = subprocess.Popen(
        [sys.executable, "-m", "benchfoundry", "ingest", str(corpus), "--out", str(tmp_path / "r")],
        env=_env(prefect_home),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    record = records / f"{owner.pid}.json"
    deadline = time.monotonic() + 240
    while not record.exists() and owner.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert record.exists(), "the command recorded the server it started"
    import json

    server_pid = json.loads(record.read_text())["server_pid"]
    owner.send_signal(signal.SIGKILL)
    owner.wait(timeout=30)
    time.sleep(1.0)
    server = psutil.Process(server_pid)
    assert server.is_running() and server.status() != psutil.STATUS_ZOMBIE  # left behind

    after = _cli(prefect_home, "ingest", str(corpus), "--out", str(tmp_path / "r"), "--json")
    assert after.returncode == 0, after.stderr[-3000:]
    try:
        server.wait(timeout=15)
    except psutil.TimeoutExpired:
        pytest.fail("the orphaned Prefect server is still running")
    except psutil.NoSuchProcess:
        pass
    assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
    assert list(records.glob("*.json")) == []  # the second command cleaned up after itself


def test_progress_goes_to_a_log_file_as_plain_lines(tmp_path, image_bytes, prefect_home):
    corpus = _corpus(tmp_path / "corpus", image_bytes)
    log = tmp_path / "ingest.log"
    with open(log, "w") as handle:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchfoundry",
                "ingest",
                str(corpus),
                "--out",
                str(tmp_path / "r"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=handle,
            env={**_env(prefect_home), "BENCHFOUNDRY_PROGRESS_SECONDS": "0"},
            cwd=REPO,
            timeout=300,
        )
    assert done.returncode == 0
    lines = log.read_text().splitlines()
    assert "read sources: 1" in lines
    assert any(
        line.startswith("decode images: 2 of 2 (100%)") and "done in" in line for line in lines
    )
    assert not any("\x1b[" in line for line in lines)  # no terminal control codes


_MANY_TASKS = """
from benchfoundry.core import env
env.configure(console_level="CRITICAL")
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from benchfoundry.pipeline.prefect_server import embedded_server
noop = task(lambda x: x, name="noop", cache_policy=NO_CACHE)
@flow(name="many-tasks")
def many():
    return [f.result() for f in [noop.submit(j) for j in range(30)]]
with embedded_server():
    many()
"""

_READ_BACK = """
import json
from benchfoundry.core import env
env.configure(console_level="CRITICAL")
from prefect.client.orchestration import get_client
from benchfoundry.pipeline.prefect_server import embedded_server
with embedded_server():
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(limit=200)
        events = client.request(
            "POST", "/events/filter",
            json={"limit": 50, "filter": {"event": {"prefix": ["prefect.task-run."]}}},
        ).json()
print(json.dumps({"states": [r.state.type.value for r in runs], "events": events["total"]}))
"""


def test_the_embedded_servers_batched_records_are_all_written_when_a_command_ends(
    tmp_path, migrated_prefect_home
):
    """The embedded server records task runs and events in batches (SERVER_BATCHES): a command
    that ran 30 tasks and exited leaves each task run's final state and every event in the
    database, as the next command's server reads them."""
    home = migrated_prefect_home(tmp_path / "home")  # migrated, no run in it
    ran = subprocess.run(
        [sys.executable, "-c", _MANY_TASKS], env=_env(home), cwd=REPO, timeout=300,
        capture_output=True, text=True,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    read = subprocess.run(
        [sys.executable, "-c", _READ_BACK], env=_env(home), cwd=REPO, timeout=300,
        capture_output=True, text=True,
    )  # fmt: skip
    assert read.returncode == 0, read.stderr[-3000:]
    import json

    found = json.loads(read.stdout.strip().splitlines()[-1])
    assert found["states"] == ["COMPLETED"] * 30
    assert found["events"] == 90  # pending, running, completed
