"""The same build under Prefect's thread pool, under Dask worker processes and under Ray workers
gives the same tables, stage by stage (ingest, extract, generate, filter, consensus, select, review, publish,
evaluate), and the same release: every task parameter is a path, a record or options, and the
backends and models are built inside the workers. The model-calling stages call catalogue
models on the local OpenAI-compatible test server, from the workers. The builds run as a user
runs them (the CLI, each in its own process, the three side by side), against a real `prefect
server start` on 127.0.0.1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from benchfoundry.devtools.compare import PER_BUILD, table_rows
from benchfoundry.devtools.synthetic import write_corpus
from benchfoundry.devtools.testserver import Oracle, Rule, Script, TestServer
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


STAGES = ["ingest", "extract", "generate", "filter", "consensus", "select", "review", "publish",
          "evaluate"]  # fmt: skip


def _catalogue(tmp_path: Path, server: TestServer) -> None:
    entries = [
        f"  - {{name: {name}, provider: openai, model: {name}, base_url: '{server.base_url}',"
        f" roles: [{role}], concurrency: 4}}"
        for name, role in (("reader", "text_only"), ("looker", "vlm"), ("grader", "judge"))
    ]
    (tmp_path / "models.yaml").write_text("models:\n" + "\n".join(entries) + "\n", encoding="utf-8")


def _start(tmp_path: Path, name: str, runner: str, url: str, env: dict) -> subprocess.Popen:
    """A build of the corpus under `runner`, started as its own process (output to files)."""
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(
        "name: runners\n"  # one name: it is part of what a release holds
        "sources: [{kind: folder, path: scenes/images}, {kind: tsv, path: scenes/questions.tsv}]\n"
        f"stages: [{', '.join(STAGES)}]\n"
        "model_catalogue: models.yaml\n"
        "options:\n"
        "  extract: {batch_size: 1}\n"
        # no embedding baseline (blind/similar): torch and its sentence encoder in each of the
        # five processes that filter took a sixth of this test's CPU, and prove nothing more here
        "  filter: {blind: [blind/longest]}\n"
        "  review: {auto: true}\n"
        f"  publish: {{to: releases-{name}, allow_unreviewed: true, letter_tolerance: 0.6,\n"
        "            longest_answer_share: 1.0}\n"
        "  evaluate: {models: [looker, blind/longest], judge: grader, mode: circular}\n"
        "models: {text_only: [reader, blind/longest], vlm: [looker],\n"
        "         judge: [grader]}\n"
        f"runner: {runner}\n"
        f"output: {name}\n",
        encoding="utf-8",
    )
    with (tmp_path / f"{name}.out").open("wb") as out, (tmp_path / f"{name}.err").open("wb") as err:
        return subprocess.Popen(  # the process keeps its own copies of the files
            [str(BIN / "benchfoundry"), "build", str(spec), "--json"],
            env={**env, "PREFECT_API_URL": url},
            stdout=out,
            stderr=err,
            cwd=tmp_path,
        )


def _finish(tmp_path: Path, name: str, build: subprocess.Popen) -> dict:
    code = build.wait(timeout=600)
    assert code == 0, (tmp_path / f"{name}.err").read_text()[-4000:]
    return json.loads((tmp_path / f"{name}.out").read_text())


def _task_runs(url: str, flow_run_name_like: str | None = None) -> list[dict]:
    request = urllib.request.Request(
        f"{url}/task_runs/filter",
        data=json.dumps({"limit": 200}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _rows(run: Path, table: str) -> list[str]:
    """A table's rows, the run's own folder made relative and per-build columns left out (each
    build names its own output, so the specs differ)."""
    return table_rows(RunFolder(run), table, [run], PER_BUILD)


def _script(runs: list[Path]) -> Script:
    """Deterministic answers: the reader says A; the looker knows the answers (it looks them up
    among the builds' candidates, the same in each) but on counting questions writes
    something only the judge reads, and the judge says C."""
    oracle = Oracle(runs)

    def looker(request) -> str:
        if re.search(r"how many", request.text, re.I):
            return "Hard to say which."
        return oracle.answer(request.text)

    return Script(
        rules=[Rule("A", model="reader"), Rule(looker, model="looker"), Rule("C", model="grader")],
        default="A",
    )


def test_thread_pool_dask_and_ray_write_identical_tables(tmp_path, prefect_server):
    url, env = prefect_server
    write_corpus(tmp_path / "scenes", n_objects=3, n_text=1, seed=11)
    runners = {"threads": "{kind: thread}", "dask": "{kind: dask, workers: 2}",
               "ray": "{kind: ray, workers: 2}"}  # fmt: skip
    # The three builds side by side (each waits on its workers and the server much of the time);
    # the looker looks its answers up in whichever build's candidates hold the question.
    with TestServer(_script([tmp_path / name for name in runners])) as server:
        _catalogue(tmp_path, server)
        started = {
            name: _start(tmp_path, name, runner, url, env) for name, runner in runners.items()
        }
        threads, dask, ray = (_finish(tmp_path, name, b) for name, b in started.items())
        calls = dict(server.stats.by_model)
    assert threads["stages"] == dask["stages"] == ray["stages"] == STAGES
    assert {"reader", "looker", "grader"} <= set(calls), calls
    for table in (
        "images",
        "image_sources",
        "quarantine",
        "visual_facts",
        "candidates",
        "judgements",
        "scored",
        "review_batches",
        "reviews",
        "results",
    ):
        a = _rows(tmp_path / "threads", table)
        assert a, table
        assert a == _rows(tmp_path / "dask", table), f"{table} differs between threads and Dask"
        assert a == _rows(tmp_path / "ray", table), f"{table} differs between threads and Ray"
    a = threads["summaries"]
    for b in (dask["summaries"], ray["summaries"]):
        assert a["publish"]["version"] == b["publish"]["version"], "the same release"
        assert [(s["model"], s["vanilla"], s["circular"]) for s in a["evaluate"]["scores"]] == [
            (s["model"], s["vanilla"], s["circular"]) for s in b["evaluate"]["scores"]
        ]
    in_threads, in_dask = threads["summaries"]["extract"], dask["summaries"]["extract"]
    assert in_dask["images_extracted"] == in_threads["images_extracted"] > 0
    assert in_threads["processes"] == 1 and in_threads["in_flow_process"]
    assert in_dask["processes"] >= 1 and not in_dask["in_flow_process"]
    in_ray = ray["summaries"]["extract"]
    assert in_ray["images_extracted"] == in_threads["images_extracted"]
    assert in_ray["processes"] >= 1 and not in_ray["in_flow_process"]
    names = {r["name"].rsplit("-", 1)[0] for r in _task_runs(url)}
    assert {"decode-images", "extract-facts", "filter", "consensus", "evaluate"} <= names
