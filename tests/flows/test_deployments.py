"""The deployments of prefect.yaml as a curator runs them: a real `prefect server start` on
127.0.0.1 with its own home, a process work pool, `prefect deploy --all`, a worker; the build
deployment runs a small spec to a release, its finished flow run's state and artifacts are read
through the API, and the release's event triggers the `evaluate-on-release` deployment, which
evaluates it on the models the spec names. Everything started here is stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchfoundry.devtools.synthetic import write_corpus

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def _api(url: str, path: str, body: dict | None = None) -> object:
    """One call of the server's REST API, retried as Prefect's own client retries: the server
    answers 503 while its SQLite database is locked by another writer (the worker, the deploy),
    having rolled the request back."""
    request = urllib.request.Request(
        f"{url}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="GET" if body is None else "POST",
    )
    for attempt in range(6):
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code not in (429, 502, 503) or attempt == 5:
                raise
            time.sleep(1 + attempt)
    raise AssertionError("unreachable")


def _wait(check, what: str, timeout: float = 300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (found := check()) is not None:
            return found
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def _spec(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "scenes", n_objects=4, n_text=0, seed=3)
    spec = tmp_path / "small.yaml"
    spec.write_text(
        "name: small\n"
        "sources: [{kind: folder, path: scenes/images}, {kind: tsv, path: scenes/questions.tsv}]\n"
        "stages: [ingest, extract, generate, filter, select, review, publish]\n"
        "options:\n"
        "  extract: {ocr: none}\n"
        "  filter: {blind: [blind/longest]}\n"  # no sentence encoder to load in the flow run
        "  select: {target: 5}\n"
        "  review: {auto: true}\n"
        "  publish: {to: releases, allow_unreviewed: true, letter_tolerance: 0.5}\n"
        "  evaluate: {models: [blind-random, blind-longest], mode: vanilla}\n"
        "models: {text_only: [blind/longest]}\n"
        "output: run\n",
        encoding="utf-8",
    )
    return spec


def _artifacts(url: str, key: str, root: str) -> list[dict]:
    """The artifacts named `key` of a flow run and its subflows (the server is shared with other
    tests, whose runs leave artifacts of the same names)."""
    tree, frontier = [root], [root]
    while frontier:
        children = _api(
            url, "/flow_runs/filter",
            {"flow_runs": {"parent_flow_run_id": {"any_": frontier}}, "limit": 200},
        )  # fmt: skip
        frontier = [c["id"] for c in children]  # type: ignore[union-attr,index]
        tree += frontier
    found = _api(
        url, "/artifacts/filter",
        {"artifacts": {"key": {"any_": [key]}, "flow_run_id": {"any_": tree}}},
    )  # fmt: skip
    return found  # type: ignore[return-value]


def test_the_build_deployment_runs_and_its_release_triggers_the_evaluation(
    tmp_path, prefect_server
):
    url, env = prefect_server
    env = {**env, "PREFECT_API_URL": url, "PREFECT_WORKER_QUERY_SECONDS": "1"}
    spec = _spec(tmp_path)
    out = tmp_path / "run"

    def cli(*args: str) -> None:
        done = subprocess.run(
            [str(BIN / "prefect"), *args], env=env, cwd=REPO, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    cli("work-pool", "create", "benchfoundry", "--type", "process", "--overwrite")
    cli("--no-prompt", "deploy", "--all")
    deployments = {
        d["name"]: d
        for d in _api(url, "/deployments/filter", {"limit": 50})  # type: ignore[union-attr]
    }
    assert {"demo-nightly", "build-on-demand", "publish-on-demand", "evaluate-on-release",
            "evaluate-on-demand"} <= set(deployments)  # fmt: skip
    nightly = _api(url, f"/deployments/{deployments['demo-nightly']['id']}/schedules")
    assert [s["schedule"]["cron"] for s in nightly] == ["0 3 * * *"]  # type: ignore[index]
    worker = subprocess.Popen(
        [str(BIN / "prefect"), "worker", "start", "--pool", "benchfoundry", "--type", "process"],
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        run = _api(
            url,
            f"/deployments/{deployments['build-on-demand']['id']}/create_flow_run",
            {"parameters": {"spec_path": str(spec), "out": str(out)}},
        )

        def finished(flow_run_id: str):
            state = _api(url, f"/flow_runs/{flow_run_id}")["state"]  # type: ignore[index]
            return state if state["type"] in FINAL else None

        state = _wait(lambda: finished(run["id"]), "the build's flow run")  # type: ignore[index]
        assert state["type"] == "COMPLETED", state
        artifacts = _api(
            url, "/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [run["id"]]}}}
        )  # type: ignore[index]
        (summary,) = [a for a in artifacts if a["key"] == "build-summary"]  # type: ignore[union-attr]
        assert summary["data"].startswith("# Build `small`")
        published = _artifacts(url, "publish-summary", run["id"])  # type: ignore[index]
        assert len(published) == 1 and "gate" in published[0]["data"]
        (release,) = [p for p in (tmp_path / "releases" / "small").iterdir() if p.is_dir()]

        # The release's event runs the evaluate-on-release deployment on the spec's models.
        def evaluated():
            runs = _api(
                url,
                "/flow_runs/filter",
                {"deployments": {"id": {"any_": [deployments["evaluate-on-release"]["id"]]}}},
            )
            done = [r for r in runs if r["state"]["type"] in FINAL]  # type: ignore[union-attr]
            return done[0] if done else None

        triggered = _wait(evaluated, "the triggered evaluation")
        assert triggered["state"]["type"] == "COMPLETED", triggered["state"]
        assert triggered["parameters"] == {"release": str(release), "run": str(out)}
        (board,) = _artifacts(url, "evaluate-leaderboard", triggered["id"])
        rows = board["data"]
        rows = json.loads(rows) if isinstance(rows, str) else rows
        labels = sorted(r["model"] for r in rows)
        assert labels == ["blind-longest (blind)", "blind-random (blind)", "chance (uniform guess)"]
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
