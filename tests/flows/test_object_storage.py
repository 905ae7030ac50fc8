"""Whole builds whose sources, run folder and releases are URLs: on fsspec's in-memory
filesystem (in this process), and on a local S3-compatible server (moto) from the command line,
as a user would run it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import fsspec
import pytest

from benchfoundry.core.records import ImageRecord
from benchfoundry.storage.objects import Store
from benchfoundry.storage.remote import RemoteRun
from benchfoundry.storage.tables import RunFolder

REPO = Path(__file__).resolve().parents[2]
STAGES = "[ingest, extract, generate, filter, consensus, select, review, publish, evaluate]"


def _spec(folder: Path, sources: str, releases: str, output: str, stages: str = STAGES) -> Path:
    spec = folder / "spec.yaml"
    spec.write_text(
        f"name: small\nsources: [{{kind: folder, path: '{sources}'}}]\nstages: {stages}\n"
        "options: {select: {target: 2}, review: {auto: true},\n"
        "  filter: {blind: [blind/longest], chance: [blind/random]},\n"
        f"  publish: {{to: '{releases}', allow_unreviewed: true, letter_tolerance: 1,\n"
        "    longest_answer_share: 1},\n"
        "  evaluate: {models: [blind-random, blind-longest]}}\n"
        f"output: '{output}'\nmodels: {{text_only: [blind/random]}}\n",
        encoding="utf-8",
    )
    return spec


def _scenes(tmp_path: Path) -> Path:
    from benchfoundry.devtools.synthetic import write_corpus

    write_corpus(tmp_path / "scenes", n_objects=3, n_text=1, seed=3)
    return tmp_path / "scenes" / "images"


def test_a_build_on_an_object_store_resumes_from_it_on_another_machine(
    tmp_path, prefect_api, monkeypatch
):
    from benchfoundry.flows.build import build

    bucket = f"/bucket-{uuid.uuid4().hex[:8]}"
    memory = fsspec.filesystem("memory")
    memory.put(str(_scenes(tmp_path)), f"{bucket}/images", recursive=True)
    run_url = f"memory:/{bucket}/run"
    spec = _spec(
        tmp_path, f"memory:/{bucket}/images", "releases", run_url, "[ingest, extract, generate]"
    )
    monkeypatch.setenv("BENCHFOUNDRY_WORKDIR", str(tmp_path / "machine-one"))
    first = build(str(spec))
    assert first.run == run_url and first.manifest == f"{run_url}/manifest.json"
    store = Store(run_url)
    assert len(store.files("_commits")) == 3  # one per stage; the end had nothing new
    assert not store.exists("_lock.json")
    # The store alone holds the run: a fresh working copy reads every table as committed.
    copy = RemoteRun(run_url, tmp_path / "reader")
    copy.pull()
    images = RunFolder(copy.path).table(ImageRecord).records()
    assert len(images) == first.table_rows["images"] > 0
    assert all(i.source.startswith(f"memory:/{bucket}/images/") for i in images)
    assert RunFolder(copy.path).counts() == first.table_rows

    # Another machine (an empty working cache) continues the run: nothing is done again.
    monkeypatch.setenv("BENCHFOUNDRY_WORKDIR", str(tmp_path / "machine-two"))
    second = build(str(spec))
    assert second.table_rows == first.table_rows
    assert second.of("extract").images_extracted == 0
    assert second.of("generate").candidates_added == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3_server(tmp_path):
    """moto's S3-compatible server on 127.0.0.1, with one bucket; stopped afterwards."""
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=open(tmp_path / "moto.log", "wb"),  # noqa: SIM115 - closed with the process
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(endpoint, timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("moto_server did not start") from None
            time.sleep(0.3)
    secret = f"fake-secret-{uuid.uuid4().hex}"
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "benchfoundry-test",
        "AWS_SECRET_ACCESS_KEY": secret,
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    import boto3

    boto3.client(
        "s3",
        endpoint_url=endpoint,
        **{
            "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": secret,
            "region_name": "us-east-1",
        },
    ).create_bucket(Bucket="benchfoundry-test")
    try:
        yield env
    finally:
        server.terminate()
        server.wait(timeout=30)


def _s3(env: dict[str, str]):
    import s3fs

    return s3fs.S3FileSystem(
        key=env["AWS_ACCESS_KEY_ID"],
        secret=env["AWS_SECRET_ACCESS_KEY"],
        endpoint_url=env["AWS_ENDPOINT_URL"],
        skip_instance_cache=True,
    )


@pytest.mark.slow
def test_the_cli_builds_from_and_into_s3(tmp_path, s3_server, prefect_server):
    s3 = _s3(s3_server)
    s3.put(str(_scenes(tmp_path)), "benchfoundry-test/images", recursive=True)
    base = "s3://benchfoundry-test"
    spec = _spec(tmp_path, f"{base}/images", f"{base}/releases", f"{base}/runs/small")
    api_url, server_env = prefect_server
    env = {
        **server_env,
        **s3_server,
        "PREFECT_API_URL": api_url,
        "BENCHFOUNDRY_WORKDIR": str(tmp_path / "work"),
    }

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "benchfoundry", *args],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
        )  # fmt: skip

    done = cli("build", str(spec), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    version = summary["summaries"]["publish"]["version"]
    assert summary["run"] == f"{base}/runs/small"
    assert summary["summaries"]["publish"]["release"] == f"{base}/releases/small/{version}"
    evaluated = summary["summaries"]["evaluate"]
    assert evaluated["dataset"]["version"] == version  # the release, fetched back from S3
    assert [m["model"] for m in evaluated["scores"]] == ["blind-random", "blind-longest"]
    assert s3.cat("benchfoundry-test/releases/small/latest").decode().strip() == version
    listed = cli("releases", "--to", f"{base}/releases", "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    [found] = json.loads(listed.stdout)["releases"]
    assert found["version"] == version and found["latest"]
    assert found["path"] == f"{base}/releases/small/{version}"
    # The store is a readable run folder: a table is its parts, read straight from S3.
    import pandas as pd

    options = {"key": s3_server["AWS_ACCESS_KEY_ID"], "secret": s3_server["AWS_SECRET_ACCESS_KEY"],
               "endpoint_url": s3_server["AWS_ENDPOINT_URL"]}  # fmt: skip
    images = pd.read_parquet(f"{base}/runs/small/images", storage_options=options)
    assert len(images) == summary["table_rows"]["images"] > 0
    assert images["source"].str.startswith(f"{base}/images/").all()
    # The manifest names the URL the build worked on; no object holds the store's secret.
    manifest = json.loads(s3.cat("benchfoundry-test/runs/small/manifest.json"))
    assert manifest["build"]["spec"]["output"] == f"{base}/runs/small"
    secret = s3_server["AWS_SECRET_ACCESS_KEY"].encode()
    for key in s3.find("benchfoundry-test"):
        assert secret not in s3.cat(key), key
    for path in (tmp_path / "work").rglob("*"):
        assert not path.is_file() or secret not in path.read_bytes(), path
    # A second build while one holds the run is refused with who holds it.
    s3.pipe(
        "benchfoundry-test/runs/small/_lock.json",
        json.dumps({"holder": "x", "host": "elsewhere", "pid": 7, "taken_at": "now",
                    "expires": time.time() + 600}).encode(),
    )  # fmt: skip
    busy = cli("build", str(spec))
    assert busy.returncode != 0
    assert "being written by another build (pid 7 on elsewhere" in busy.stderr
    assert os.environ.get("AWS_SECRET_ACCESS_KEY") != s3_server["AWS_SECRET_ACCESS_KEY"]
