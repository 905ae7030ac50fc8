"""The review app at campaign size: a run of 20,000 candidates cut into batches of 50 for 20
annotators (the review stage, with its cross-checks), each annotator signed in with their own
token, and 40,000 decisions posted by 20 concurrent clients to a real `benchfoundry review
serve`. Prints the p50/p95 of a decision's POST, of a 50-sample batch page and of the batch list,
measured at each quarter of the load (they must not grow with the number of decisions), the
server's peak memory, and the time of `benchfoundry review status` at the end.

    python bench/review_scale.py [--candidates 20000] [--annotators 20] [--decisions 40000]
                                 [--clients 20] [--interval 0.2] [--postgres | --database URL]
                                 [--keep DIR]

Each client posts a decision every `--interval` seconds (0.2: five a second, fifty times a fast
person's pace; a hundred a second in all), or back to back with `--interval 0`, which measures
the server's throughput instead (the latency is then the queue of 20 clients).

SQLite in the run folder by default; `--postgres` starts a temporary PostgreSQL server on
127.0.0.1 (see benchfoundry/devtools/postgres.py).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DIMENSIONS = (
    "instances_counting",
    "instance_attributes",
    "instance_location",
    "scene_understanding",
)
MODELS = ("reader-a", "reader-b", "reader-c")


def build(root: Path, candidates: int, annotators: int) -> dict[str, list[str]]:
    """The run folder (images, candidates, scores, judgements, batches); batch ids per
    annotator."""
    from benchfoundry.core.records import (
        CandidateRecord,
        ImageRecord,
        JudgementRecord,
        ScoredRecord,
    )
    from benchfoundry.devtools.synthetic import noise_images
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
    from benchfoundry.tasks.review.stage import export_batches

    run = RunFolder(root)
    rows = list(noise_images(200, 320, quality=85))
    ids = [r.image_id for r in rows]
    run.table(ImageRecord).append(rows)
    cands, scored, judged = [], [], []
    for i in range(candidates):
        qid = f"q{i:06d}"
        answer = "ABCD"[(i // 4) % 4]
        cands.append(
            CandidateRecord(
                question_id=qid,
                image_id=ids[i % len(ids)],
                dimension=DIMENSIONS[i % 4],
                question=f"Question {i} about the <picture>?",
                hint=None,
                options=[f"choice {i}-{j}" for j in range(4)],
                answer=answer,
                category=None,
                l2_category=None,
                split=None,
                generator="bench",
                prompt_id=None,
                prompt_hash=None,
                evidence=[],
                source="bench",
                meta={"n": str(i)},
                raw_output=None,
            )  # fmt: skip
        )
        scored.append(
            ScoredRecord(
                question_id=qid,
                image_id=ids[i % len(ids)],
                dimension=DIMENSIONS[i % 4],
                answer=answer,
                hits_text=0,
                hits_text_circular=None,
                n_text_models=1,
                text_hit_by=[],
                hits_vlm=i % 4,
                hits_vlm_circular=None,
                n_vlm_models=3,
                vlm_hit_by=[],
                flags=[],
                difficulty="hard",
                decision="selected",
                reason="bench",
                rank=i,
            )  # fmt: skip
        )
        for m, model in enumerate(MODELS):
            judged.append(
                JudgementRecord(
                    question_id=qid,
                    model=model,
                    mode="vlm",
                    with_image=True,
                    pass_index=0,
                    option_order=["A", "B", "C", "D"],
                    prompt="...",
                    raw_response="B",
                    extracted="ABCD"[(i + m) % 4],
                    extracted_by="letter",
                    correct="ABCD"[(i + m) % 4] == answer,
                    error=None,
                )  # fmt: skip
            )
    for start in range(0, candidates, 5000):  # parts as a build writes them
        run.table(CandidateRecord).append(cands[start : start + 5000])
        run.table(ScoredRecord).append(scored[start : start + 5000])
    for start in range(0, len(judged), 15000):
        run.table(JudgementRecord).append(judged[start : start + 15000])
    names = [f"ann{i:02d}" for i in range(annotators)]
    options = ReviewOptions(reviewers=[Reviewer(name=n) for n in names], batch_size=50)
    export_batches(str(root), options, "bench")
    from benchfoundry.core.records import ReviewBatchRecord

    mine: dict[str, list[str]] = {n: [] for n in names}
    for b in run.table(ReviewBatchRecord).records():
        mine[b.reviewer].append(b.batch_id)
    return mine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(
    conn: http.client.HTTPConnection, method: str, path: str, token: str, body: object = None
) -> tuple[int, bytes, float]:
    headers = {"Authorization": f"Bearer {token}", "Host": conn.host + f":{conn.port}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
        headers["Origin"] = f"http://{conn.host}:{conn.port}"
    start = time.perf_counter()
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    return response.status, raw, time.perf_counter() - start


def _client(args: tuple[int, float, list[tuple[str, str, str]], int]) -> list[float]:
    """One load process: its clients (threads) post their decisions, each one every `interval`
    seconds (0: back to back); the latencies."""
    port, interval, work, threads = args
    latencies: list[float] = []
    lock = threading.Lock()
    errors: list[str] = []

    def one(items: list[tuple[str, str, str]]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine: list[float] = []
        next_at = time.perf_counter() + random.random() * interval
        for token, question_id, batch_id in items:
            if interval:
                time.sleep(max(0.0, next_at - time.perf_counter()))
                next_at += interval
            n = len(mine)
            body: dict[str, object] = {"question_id": question_id, "batch_id": batch_id,
                                       "decision": "accept", "lead_time_s": 3.0}  # fmt: skip
            if n % 7 == 3:
                body = {**body, "decision": "reject", "reason": "ambiguous question or options"}
            status, raw, seconds = _request(conn, "POST", "/api/reviews", token, body)
            if status != 201:
                errors.append(f"{status} {raw[:200]!r}")
            mine.append(seconds)
        with lock:
            latencies.extend(mine)

    per = [work[i::threads] for i in range(threads)]
    pool = [threading.Thread(target=one, args=(items,)) for items in per]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} decisions refused, e.g. {errors[:3]}")
    return latencies


def _pages(
    port: int, token: str, batch_ids: list[str], samples: int = 12
) -> dict[str, list[float]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    out: dict[str, list[float]] = {"batch page": [], "batch list": []}
    rng = random.Random(1)
    for _ in range(samples):
        status, _, seconds = _request(conn, "GET", f"/batches/{rng.choice(batch_ids)}", token)
        assert status == 200, status
        out["batch page"].append(seconds)
        status, _, seconds = _request(conn, "GET", "/", token)
        assert status == 200, status
        out["batch list"].append(seconds)
    return out


def _p(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=20_000)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--decisions", type=int, default=40_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument(
        "--interval",
        type=float,
        default=0.2,
        help="seconds between one client's decisions (0.2: five a second each, a hundred a "
        "second in all; 0: back to back, the server's throughput)",
    )
    parser.add_argument("--database", help="a database URL (default SQLite in the run folder)")
    parser.add_argument("--postgres", action="store_true", help="a temporary PostgreSQL server")
    parser.add_argument("--keep", type=Path, help="build the run here and keep it")
    args = parser.parse_args()

    import psutil

    from benchfoundry.decisions.store import ReviewStore
    from benchfoundry.storage.tables import RunFolder

    with ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory())) / "run"
        url = args.database
        if args.postgres:
            from benchfoundry.devtools.postgres import temporary_postgres

            url = stack.enter_context(temporary_postgres()).fresh()
        start = time.perf_counter()
        batches = build(root, args.candidates, args.annotators)
        built = time.perf_counter() - start
        store = ReviewStore.open(RunFolder(root), url)
        tokens = {name: store.add_user(name, "annotator") for name in batches}
        admin = store.add_user("chief", "admin")
        port = _free_port()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        command = [sys.executable, "-m", "benchfoundry", "review", "serve", "--out", str(root),
                   "--port", str(port)] + (["--database", url] if url else [])  # fmt: skip
        server = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        stack.callback(server.kill)
        deadline = time.time() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    output = server.stdout.read()[-2000:]
                    raise SystemExit(f"the server did not start: {output!r}") from None
                time.sleep(0.2)
        process = psutil.Process(server.pid)
        peak = [process.memory_info().rss]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                peak.append(process.memory_info().rss)
                time.sleep(0.5)

        threading.Thread(target=watch, daemon=True).start()
        # the work: each annotator decides their batches' questions in order, again from the
        # start when done (a changed mind: a new row, the latest counts)
        from benchfoundry.core.records import ReviewBatchRecord

        by_id = {b.batch_id: b for b in RunFolder(root).table(ReviewBatchRecord).records()}
        queues = {
            name: [(tokens[name], q, b) for b in ids for q in by_id[b].question_ids]
            for name, ids in batches.items()
        }
        per_annotator = args.decisions // len(queues)
        work = {
            name: [queue[i % len(queue)] for i in range(per_annotator)]
            for name, queue in queues.items()
        }
        every_batch = list(by_id)
        rows: list[tuple[int, dict[str, list[float]], list[float]]] = []
        rows.append((0, _pages(port, admin, every_batch), []))
        processes = min(4, args.clients)
        clients_per = max(1, args.clients // processes)
        names = list(work)
        load_started = time.perf_counter()
        for quarter in range(4):
            share = [
                item
                for name in names
                for item in work[name][
                    quarter * per_annotator // 4 : (quarter + 1) * per_annotator // 4
                ]
            ]
            chunks = [share[i::processes] for i in range(processes)]
            with multiprocessing.get_context("spawn").Pool(processes) as pool:
                parts = pool.map(
                    _client, [(port, args.interval, chunk, clients_per) for chunk in chunks]
                )
            posted = [s for part in parts for s in part]
            rows.append(((quarter + 1) * len(names) * per_annotator // 4,
                         _pages(port, admin, every_batch), posted))  # fmt: skip
        load_seconds = time.perf_counter() - load_started
        done.set()
        start = time.perf_counter()
        status = subprocess.run(
            [sys.executable, "-m", "benchfoundry", "review", "status", "--out", str(root), "--json"]
            + (["--database", url] if url else []),
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        status_seconds = time.perf_counter() - start
        if status.returncode != 0:
            raise SystemExit(f"review status failed: {status.stderr[-2000:]}")
        decided = json.loads(status.stdout)["decisions"]
        server.terminate()
        server.wait(timeout=60)

    backend = "PostgreSQL 15 (temporary, loopback)" if args.postgres else (
        "given URL" if args.database else "SQLite (WAL) in the run folder")  # fmt: skip
    print(f"review app at scale: {args.candidates:,} candidates, {len(batches)} annotators, "
          f"{len(by_id)} batches, {backend}")  # fmt: skip
    pace = f"each one every {args.interval} s" if args.interval else "back to back"
    print(f"  run built in {built:.1f} s; load: {args.decisions:,} decisions posted by "
          f"{processes * clients_per} clients ({pace}) in {load_seconds:.1f} s "
          f"({args.decisions / load_seconds:.0f}/s)")  # fmt: skip
    print(f"  {'decisions':>10}  {'POST p50':>9} {'POST p95':>9}  {'page p50':>9} {'page p95':>9}"
          f"  {'list p50':>9} {'list p95':>9}")  # fmt: skip
    for n, pages, posted in rows:
        post = f"{_p(posted, 50):8.1f}  {_p(posted, 95):8.1f}" if posted else f"{'':>8}  {'':>8}"
        print(f"  {n:>10,}  {post}  {_p(pages['batch page'], 50):8.1f}  "
              f"{_p(pages['batch page'], 95):8.1f}  {_p(pages['batch list'], 50):8.1f}  "
              f"{_p(pages['batch list'], 95):8.1f}   (ms)")  # fmt: skip
    every_post = [s for _, _, posted in rows for s in posted]
    print(f"  all decisions: POST p95 {_p(every_post, 95):.1f} ms over {len(every_post):,}")
    print(f"  review status: {status_seconds:.2f} s ({decided:,} decisions stored: a repeat "
          "of a reviewer's latest decision is not stored again)")  # fmt: skip
    print(f"  server peak memory: {max(peak) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
