"""A build into an S3-compatible store against the same build on local disk.

Starts moto's S3 server on 127.0.0.1 (the dev extra installs it), puts N synthetic scenes in a
bucket, and runs `benchfoundry build SPEC --json` twice, each in its own process: sources, run
folder and releases local, then all three on S3. Prints both wall times, the commits made, the
objects and bytes the store holds for the run, and the seconds a fresh working copy (another
machine) takes to pull the finished run.

    python bench/object_store.py [--scenes 40]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

SPEC = """name: stored
sources: [{{kind: folder, path: '{images}'}}]
stages: [ingest, extract, generate, filter, select, review, publish]
options:
  extract: {{ocr: none}}
  filter: {{blind: [blind/longest], chance: [blind/random]}}
  select: {{target: 100000}}
  review: {{auto: true}}
  publish: {{to: '{releases}', allow_unreviewed: true, letter_tolerance: 1.0, longest_answer_share: 1.0}}
models: {{text_only: [blind/similar]}}
output: '{out}'
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=40)
    args = parser.parse_args()

    import boto3
    import s3fs
    from incremental import timed_build  # bench/, beside this script

    from benchfoundry.devtools.synthetic import write_corpus
    from benchfoundry.storage.remote import RemoteRun

    port = _port()
    endpoint = f"http://127.0.0.1:{port}"
    creds = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret"}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        os.environ.update(creds, AWS_ENDPOINT_URL=endpoint, AWS_DEFAULT_REGION="us-east-1")
        boto3.client("s3").create_bucket(Bucket="bench")
        s3 = s3fs.S3FileSystem(skip_instance_cache=True)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            os.environ["BENCHFOUNDRY_WORKDIR"] = str(root / "work")
            write_corpus(root / "scenes", n_objects=args.scenes, n_text=0, seed=7)
            s3.put(str(root / "scenes" / "images"), "bench/images", recursive=True)
            results = {}
            for where, base in (("local", str(root)), ("s3", "s3://bench")):
                spec = root / f"{where}.yaml"
                images = root / "scenes" / "images" if where == "local" else f"{base}/images"
                spec.write_text(
                    SPEC.format(
                        images=images, releases=f"{base}/releases", out=f"{base}/runs/stored"
                    ),
                    encoding="utf-8",
                )
                summary, seconds = timed_build(spec, root / "prefect")
                results[where] = (summary, seconds)
                print(
                    f"{where:<5} {seconds:6.1f} s, release {summary['summaries']['publish']['version']} "
                    f"({summary['summaries']['publish']['rows']} questions)",
                    flush=True,
                )
            objects = s3.find("bench/runs/stored", detail=True)
            commits = [k for k in objects if "/_commits/" in k]
            data = sum(v["size"] for k, v in objects.items() if "/_commits/" not in k)
            print(
                f"s3 run: {len(commits)} commits, {len(objects) - len(commits)} objects, "
                f"{data / 2**20:.1f} MiB; extra time over local "
                f"{results['s3'][1] - results['local'][1]:+.1f} s"
            )
            start = time.perf_counter()
            RemoteRun("s3://bench/runs/stored", root / "fresh").pull()
            print(f"pull onto an empty working copy: {time.perf_counter() - start:.1f} s")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
