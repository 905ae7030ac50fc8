"""The same build under Prefect's thread pool and under Dask worker processes gives the same
tables: every task parameter is a path, a record or options, and the backends and models are
built inside the workers. Both builds run as a user runs them (the CLI, in its own process),
against a real `prefect server start` on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchfoundry.storage import RunFolder
from benchfoundry.synthetic import write_corpus

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def _build(tmp_path: Path, name: str, runner: str, url: str, env: dict) -> dict:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(
        f"name: {name}\n"
        "sources: [{kind: folder, path: scenes/images}, {kind: tsv, path: scenes/questions.tsv}]\n"
        "stages: [ingest, extract, generate, filter]\n"
        "options: {extract: {batch_size: 1}}\n"
        "models: {text_only: [blind/longest, blind/similar]}\n"
        f"runner: {runner}\n"
        f"output: {name}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(BIN / "benchfoundry"), "build", str(spec), "--json"],
        env={**env, "PREFECT_API_URL": url},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def _rows(run: Path, table: str) -> list[str]:
    folder = RunFolder(run).table_named(table).path
    parts = sorted(folder.glob("*.parquet")) if folder.is_dir() else [folder]
    rows = []
    for part in parts:
        for row in pq.read_table(part).to_pylist():
            rows.append(json.dumps(row, default=repr, sort_keys=True))
    return sorted(rows)


def _task_runs(url: str, flow_run_name_like: str | None = None) -> list[dict]:
    request = urllib.request.Request(
        f"{url}/task_runs/filter",
        data=json.dumps({"limit": 200}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_thread_pool_and_dask_processes_write_identical_tables(tmp_path, prefect_server):
    url, env = prefect_server
    write_corpus(tmp_path / "scenes", n_objects=3, n_text=1, seed=11)
    threads = _build(tmp_path, "threads", "{kind: thread}", url, env)
    dask = _build(tmp_path, "dask", "{kind: dask, workers: 2}", url, env)
    assert threads["stages"] == dask["stages"] == ["ingest", "extract", "generate", "filter"]
    for table in (
        "images",
        "image_sources",
        "quarantine",
        "visual_facts",
        "candidates",
        "judgements",
    ):
        a, b = _rows(tmp_path / "threads", table), _rows(tmp_path / "dask", table)
        assert a and a == b, f"{table} differs between the thread pool and Dask"
    in_threads, in_dask = threads["summaries"]["extract"], dask["summaries"]["extract"]
    assert in_dask["images_extracted"] == in_threads["images_extracted"] > 0
    assert in_threads["processes"] == 1 and in_threads["in_flow_process"]
    assert in_dask["processes"] >= 1 and not in_dask["in_flow_process"]
    names = {r["name"].rsplit("-", 1)[0] for r in _task_runs(url)}
    assert {"decode-images", "extract-facts", "filter"} <= names
