"""`benchfoundry evaluate` as a user runs it, in a process of its own, against the test server
when calls fail: a question whose call failed is scored wrong and counted by reason, the command
exits 3 (0 with --allow-failures) and a rerun asks only what failed; a dead model (unreachable,
unknown, refused key) stops the command in seconds before any question is asked; Ctrl-C stops
it in seconds with the answers kept and a rerun resumes; a release is never written into."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from benchfoundry.core.records import CallFailureRecord, ResultRecord
from benchfoundry.devtools.testserver import Refusal, Rule, Script, TestServer
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.leaderboard import read_summary

REPO = Path(__file__).resolve().parents[3]
N = 20
pytestmark = pytest.mark.slow


def _tsv(path: Path, image_bytes, n: int = N) -> Path:
    """`n` questions, two per image; the right option of question k is `k-right`, shown first."""
    rows = []
    for i in range(n):
        image = base64.b64encode(image_bytes(seed=i // 2)).decode() if i % 2 == 0 else str(i - 1)
        rows.append(
            {
                "index": i, "image": image, "question": f"Question {i}: which one?",
                "A": f"{i}-right", "B": f"{i}-w1", "C": f"{i}-w2", "D": f"{i}-w3",
                "answer": "A", "category": "even" if i % 2 == 0 else "odd",
            }
        )  # fmt: skip
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _right(request) -> str:
    """Names the right option's text: right under every rotation."""
    found = next((w for w in request.text.split() if w.endswith("-right")), None)
    return found or "Z"


def _cli(*args: str, timeout: float = 300, key: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"OPENAI_API_KEY": key} if key else {})}
    return subprocess.run(
        [sys.executable, "-m", "benchfoundry", *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip


def _asked(server: TestServer, model: str | None = None) -> list[str]:
    """The dataset's questions the server was asked (not the preflight's tiny question)."""
    found = []
    for body in server.stats.bodies:
        text = json.dumps(body)
        if "Question" in text and (model is None or body.get("model") == model):
            found.append(text.split("Question ", 1)[1].split(":", 1)[0])
    return found


REFUSED = {1, 5, 9, 13, 17}  # the questions the picky model's server refuses


def test_failed_calls_are_scored_wrong_counted_and_asked_again(tmp_path, image_bytes):
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes)
    run = tmp_path / "run"
    pattern = r"Question (" + "|".join(map(str, sorted(REFUSED))) + r"):"
    limit = Refusal(400, "At most 1 image(s) may be provided in one request.")
    script = Script(rules=[Rule(limit, model="picky", pattern=pattern), Rule(_right)])
    with TestServer(script) as server:
        good, picky = (f"openai/{m}@{server.base_url}" for m in ("good", "picky"))
        args = ["evaluate", "--out", str(run), "--dataset", str(tsv), "--model", good,
                "--model", picky, "--mode", "vanilla"]  # fmt: skip
        # --allow-failures: exit 0 with the same scores (exit 3 without it: the other tests)
        first = _cli(*args, "--allow-failures")
        assert first.returncode == 0, first.stderr[-3000:]
        summary = read_summary(run).model_dump(mode="json", by_alias=True)
        scores = {s["model"]: s for s in summary["scores"]}
        assert scores[picky]["questions"] == N and scores[picky]["answered"] == N - 5
        assert scores[picky]["failed"] == 5
        assert scores[picky]["failed_by_reason"] == {"HTTP 400": 5}
        assert scores[picky]["vanilla"]["correct"] == 15
        assert scores[picky]["vanilla"]["accuracy"] == pytest.approx(0.75)
        assert scores[good]["vanilla"]["accuracy"] == 1.0 and scores[good]["failed"] == 0
        odd = scores[picky]["by_category"]["odd"]["vanilla"]  # every refused question is odd
        assert (odd["questions"], odd["correct"]) == (10, 5)
        stored = RunFolder(run).table(CallFailureRecord).records()
        assert len(stored) == 5 and {r.reason for r in stored} == {"HTTP 400"}
        assert "At most 1 image" in stored[0].detail

        # The board a reader sees says it too.
        assert "| 5 (HTTP 400 5) |" in first.stdout
        assert "5 of 20 questions failed (HTTP 400 5), scored wrong" in first.stdout
        board = (run / "reports" / "evaluation" / "leaderboard.md").read_text(encoding="utf-8")
        assert "| 5 (HTTP 400 5) |" in board
        html = (run / "reports" / "evaluation" / "report.html").read_text(encoding="utf-8")
        assert "5 (HTTP 400 5)" in html
        assert sorted(_asked(server, "picky"), key=int) == [str(i) for i in range(N)]

        script.rules[0] = Rule(_right)  # the server now takes them
        before = len(_asked(server))
        mended = _cli(*args, "--json")
        assert mended.returncode == 0, mended.stderr[-3000:]
        # the rerun asked only the five that failed
        assert sorted(_asked(server)[before:], key=int) == [str(i) for i in sorted(REFUSED)]
    scores = {s["model"]: s for s in json.loads(mended.stdout)["scores"]}
    assert scores[picky]["failed"] == 0 and scores[picky]["vanilla"]["accuracy"] == 1.0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_models_stop_the_command_in_seconds_before_any_question(tmp_path, image_bytes):
    """Three dead models in one command (each a problem of its own in the preflight's one
    line): an unreachable server, a model the server does not serve, a refused key."""
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes, n=4)
    with TestServer(
        Script(rules=[Rule(_right)]), served=["good", "other"], api_key="right"
    ) as server:
        good = f"openai/good@{server.base_url}"
        unreachable = f"openai/good@http://127.0.0.1:{_closed_port()}/v1"
        ghost = f"openai/ghost@{server.base_url}"
        (tmp_path / "models.yaml").write_text(
            f"models:\n  - {{name: other, provider: openai, model: other, base_url: "
            f"'{server.base_url}', api_key_env: BENCH_OTHER_KEY}}\n",
            encoding="utf-8",
        )
        (tmp_path / "spec.yaml").write_text(
            "name: t\nmodel_catalogue: models.yaml\nsources: [{kind: tsv, path: bench.tsv}]\n",
            encoding="utf-8",
        )
        os.environ["BENCH_OTHER_KEY"] = "wrong-key-123"
        started = time.monotonic()
        try:
            done = _cli("evaluate", "--out", str(tmp_path / "run"), "--dataset", str(tsv),
                        "--model", good, "--model", unreachable, "--model", ghost,
                        "--model", "other", "--spec", str(tmp_path / "spec.yaml"),
                        timeout=60, key="right")  # fmt: skip
        finally:
            os.environ.pop("BENCH_OTHER_KEY")
        took = time.monotonic() - started
        assert done.returncode == 1, done.stdout[-2000:]
        assert _asked(server) == [], "no question was asked of any model"
    assert took < 30
    message = done.stderr
    assert "preflight: 3 problems" in message
    for model, cause, fix in [
        (unreachable, "connection", "is the server running"),
        (ghost, "HTTP 404", "does not serve a model named 'ghost'"),
        ("other", "HTTP 401", "refused the key: set BENCH_OTHER_KEY"),
    ]:
        assert f"{model} (options.evaluate.models): not reached" in message
        assert cause in message and fix in message
    assert message.count("not reached at http://127.0.0.1:") == 3
    assert good + " (" not in message, "the good model is no problem"
    assert "wrong-key-123" not in message + done.stdout, "no key shown"


def _spec(folder: Path, **evaluate: object) -> Path:
    spec = folder / "spec.yaml"
    spec.write_text(
        f"name: t\nsources: [{{kind: tsv, path: bench.tsv}}]\noptions: {{evaluate: {json.dumps(evaluate)}}}\n",
        encoding="utf-8",
    )
    return spec


def _migrated_home(prefect_server, home: Path) -> Path:
    """A Prefect home for a command's own embedded server, its database a consistent copy of
    the session server's (SQLite's backup): already migrated, the server starts in seconds
    instead of migrating a fresh database (20 s and more on this machine)."""
    import sqlite3
    from contextlib import closing

    _, env = prefect_server
    home.mkdir()
    source = sqlite3.connect(Path(env["PREFECT_HOME"]) / "prefect.db")
    with closing(source), closing(sqlite3.connect(home / "prefect.db")) as copy:
        source.backup(copy)
    return home


def test_ctrl_c_stops_in_seconds_keeps_the_answers_and_a_rerun_resumes(
    tmp_path, image_bytes, prefect_server
):
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes, n=60)
    run = tmp_path / "run"
    with TestServer(Script(rules=[Rule(_right)]), latency_s=0.25) as server:
        model = f"openai/m@{server.base_url}"
        args = [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(run),
                "--dataset", str(tsv), "--model", model, "--mode", "vanilla",
                "--spec", str(_spec(tmp_path, batch_size=8))]  # fmt: skip
        # Run as a user runs it: Prefect's embedded server, started by the command in a
        # Prefect home of its own (not the suite's shared server, whose URL tests inherit).
        home = _migrated_home(prefect_server, tmp_path / "prefect-home")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
        env.update(PREFECT_HOME=str(home), DO_NOT_TRACK="1",
                   PREFECT_SERVER_ANALYTICS_ENABLED="false",
                   PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120")  # fmt: skip
        process = subprocess.Popen(
            args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True, env=env,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        while len(_asked(server)) < 12 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C on a terminal signals the group
        pressed = time.monotonic()
        _, err = process.communicate(timeout=60)
        took = time.monotonic() - pressed
        assert process.returncode == 130, err[-3000:]
        assert took < 10
        assert "run the same command again to resume" in err
        assert "Error logging to API" not in err
        assert (home / "prefect.db").exists(), "the command ran its own embedded server"
        assert not list((home / "benchfoundry-servers").glob("*.json")), "and stopped it"
        kept = {r.question_id for r in RunFolder(run).table(ResultRecord).records()}
        asked_before = len(_asked(server))
        assert 8 <= len(kept) < 60 and asked_before < 60
        resumed = _cli(*args[3:], "--json")
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        requests = server.stats.requests
    (score,) = json.loads(resumed.stdout)["scores"]
    assert score["failed"] == 0 and score["vanilla"]["correct"] == 60
    assert score["reused"] == len(kept)
    assert len(_asked(server)) - asked_before == 60 - len(kept), "no kept answer asked again"
    assert score["calls_made"] == 60 - len(kept), "calls made counts what the server received"
    # Finished: the same command again needs no server (none is running now), asks nothing.
    again = _cli(*args[3:], "--json")
    assert again.returncode == 0, again.stderr[-3000:]
    (score,) = json.loads(again.stdout)["scores"]
    assert score["vanilla"]["correct"] == 60 and score["calls_made"] == 0
    assert server.stats.requests == requests


def test_a_release_folder_is_never_an_evaluation_folder(tmp_path, image_bytes):
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes, n=2)
    version = tmp_path / "releases" / "demo" / "abc123"
    (version / "data").mkdir(parents=True)
    (version / "manifest.json").write_text(
        json.dumps({"name": "demo", "version": "abc123", "files": {}}), encoding="utf-8"
    )
    (version.parent / "latest").write_text("abc123\n", encoding="utf-8")
    for out in (version, version.parent, version / "results"):
        done = _cli("evaluate", "--out", str(out), "--dataset", str(tsv), "--model",
                    "blind/random", timeout=60)  # fmt: skip
        assert done.returncode == 1
        assert "is a published release, and a release never changes" in done.stderr
        assert "--dataset" in done.stderr
    assert sorted(p.name for p in version.iterdir()) == ["data", "manifest.json"]
