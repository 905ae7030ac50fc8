"""How busy `evaluate` keeps a server, and how it rides out a misbehaving one (issue 55).

    python bench/evaluate_load.py throughput [--latency 1.0] [--concurrency 64] [--rounds 10]
    python bench/evaluate_load.py zero [--questions 3000] [--concurrency 16]
    python bench/evaluate_load.py soak [--questions 10000] [--concurrency 64] [--timeout 3]

Each runs the evaluate stage's own job (`tasks/evaluate/stage.py:evaluate_model`: the
scheduler, the gateway, the answering engine, the results written to Parquet) in this process
against the loopback test server, vanilla, on a VLMEvalKit TSV of synthetic questions (100
images shared by the questions).

- `throughput`: the server answers each call after `--latency` seconds; prints the requests per
  second against the ideal, concurrency / latency (goal: at least 90% at 1 s and 64 in flight).
- `zero`: the server answers at once; prints the requests per second benchfoundry itself issues
  and scores on this machine.
- `soak`: `--questions` questions; the first call of 2% of them hangs (the server answers after
  the client gave up), of 5% gets HTTP 500 and of 1% HTTP 429, the questions chosen by number,
  and the second call of each is answered. Runs the same questions with no fault first, then
  with them, each into a fresh folder; checks that every fault was met (each faulted question
  asked exactly twice, every other exactly once), that no question is lost or stored twice and
  that the accuracy is exact (the stand-in answers question k right unless k % 10 == 9), and
  prints both times against the bound: fault-free + one timeout + a retry pause.

Only 127.0.0.1 is used; the counts are bounded and every run stops by itself.
"""

from __future__ import annotations

import argparse
import base64
import io
import multiprocessing
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402
from PIL import Image  # noqa: E402

from benchfoundry.core.records import CallFailureRecord, ResultRecord  # noqa: E402
from benchfoundry.devtools.testserver import Rule, Script, TestServer  # noqa: E402
from benchfoundry.devtools.testserver_script import FirstCallFaults  # noqa: E402
from benchfoundry.storage.tables import RunFolder  # noqa: E402
from benchfoundry.tasks.evaluate.options import EvaluateOptions  # noqa: E402
from benchfoundry.tasks.evaluate.stage import evaluate_model  # noqa: E402

IMAGES = 100


def _image(seed: int) -> str:
    picture = Image.new("RGB", (48, 36), (seed * 37 % 256, seed * 53 % 256, seed * 91 % 256))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def dataset(folder: Path, n: int) -> Path:
    """`n` questions on IMAGES images (a question's image is the first row of its image's)."""
    rows = []
    for i in range(n):
        rows.append(
            {
                "index": i,
                "image": _image(i) if i < IMAGES else str(i % IMAGES),
                "question": f"Question {i}: which one?",
                "A": f"{i}-right", "B": f"{i}-w1", "C": f"{i}-w2", "D": f"{i}-w3",
                "answer": "A",
                "category": "c",
            }
        )  # fmt: skip
    path = folder / "bench.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


class Served:
    """A test server in a process of its own (forked), so that its work does not share this
    process's interpreter lock with the evaluation measured: `url` while it runs, then
    `stats` (requests, most in flight, and what the script's `report()` gives)."""

    def __init__(self, script_rule, latency: float) -> None:
        self.rule, self.latency = script_rule, latency
        self.stats: dict = {}

    def _serve(self, urls, stop, results) -> None:
        with TestServer(Script(rules=[Rule(self.rule)]), latency_s=self.latency) as server:
            urls.put(server.base_url)
            stop.wait()
            stats = server.stats
            results.put(
                {
                    "requests": stats.requests,
                    "most": stats.max_in_flight,
                    **(self.rule.report() if hasattr(self.rule, "report") else {}),
                }
            )

    def __enter__(self) -> Served:
        context = multiprocessing.get_context("fork")
        urls, results = context.Queue(), context.Queue()
        self._stop = context.Event()
        self._results = results
        self._process = context.Process(target=self._serve, args=(urls, self._stop, results))
        self._process.start()
        self.url = urls.get(timeout=60)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.stats = self._results.get(timeout=60)
        self._process.join(timeout=60)


def catalogue(folder: Path, url: str, concurrency: int, timeout: float) -> Path:
    path = folder / "models.yaml"
    path.write_text(
        "models:\n"
        f"  - {{name: m, provider: openai, model: m, base_url: '{url}', "
        f"concurrency: {concurrency}, timeout_s: {timeout}, max_attempts: 5}}\n",
        encoding="utf-8",
    )
    return path


def run(folder: Path, tsv: Path, models: Path, concurrency: int) -> tuple[float, object]:
    """The evaluate job of model `m` on `tsv` into `folder`; (seconds, its ModelRun)."""
    options = EvaluateOptions(models=["m"], mode="vanilla", concurrency=concurrency)
    started = time.monotonic()
    job = evaluate_model(str(folder), str(tsv), options, "m", True, str(models))
    return time.monotonic() - started, job


class Timed:
    """Answers right, noting when each answer was made (after the server's latency)."""

    def __init__(self) -> None:
        self.at: list[float] = []

    def __call__(self, request) -> str:
        self.at.append(time.monotonic())
        return FirstCallFaults.answer(request.text)

    def report(self) -> dict:
        return {"first": min(self.at), "last": max(self.at)}


def throughput(args: argparse.Namespace) -> None:
    n = args.concurrency * args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tsv = dataset(folder, n)
        with Served(Timed(), args.latency) as server:
            models = catalogue(folder, server.url, args.concurrency, 30)
            started = time.monotonic()
            took, job = run(folder / "run", tsv, models, args.concurrency)
        got = server.stats
    requests, most = got["requests"], got["most"]
    ideal = args.concurrency / args.latency
    # From the first request sent (its answer less the latency) to the last answer.
    span = got["last"] - (got["first"] - args.latency)
    print(
        f"{requests} requests at latency {args.latency:g} s, {args.concurrency} in flight (most "
        f"seen by the server: {most}): {requests / span:.1f} req/s from the first request to "
        f"the last answer ({span:.2f} s) against the ideal {ideal:.1f} "
        f"({requests / span / ideal:.1%}); the whole job {took:.2f} s ({requests / took:.1f} "
        f"req/s: the set-up, reading the dataset, {got['first'] - args.latency - started:.2f} s,"
        f" and storing after the last answer included); failed {job.unanswered}"
    )


def zero(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tsv = dataset(folder, args.questions)
        with Served(Timed(), 0.0) as server:
            models = catalogue(folder, server.url, args.concurrency, 30)
            took, job = run(folder / "run", tsv, models, args.concurrency)
        requests = server.stats["requests"]
        span = server.stats["last"] - server.stats["first"]
    print(
        f"{requests} requests against a server that answers at once (in a process of its "
        f"own), {args.concurrency} in flight: {requests / span:.1f} req/s issued, answered and "
        f"scored from the first answer to the last ({span:.2f} s); the whole job {took:.2f} s, "
        f"{requests / took:.1f} req/s with reading the dataset and storing; failed "
        f"{job.unanswered}"
    )


def soak(args: argparse.Namespace) -> None:
    n = args.questions
    expected_right = sum(1 for k in range(n) if k % 10 != 9)
    plan = FirstCallFaults(0.0)
    planned = Counter(f for k in range(n) if (f := plan.fault_of(k)))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tsv = dataset(folder, n)
        times = {}
        for faults in (False, True):
            stand_in = FirstCallFaults(args.timeout + 1.0, on=faults)
            with Served(stand_in, args.latency) as server:
                models = catalogue(folder, server.url, args.concurrency, args.timeout)
                out = folder / ("faulted" if faults else "clean")
                took, job = run(out, tsv, models, args.concurrency)
            requests, calls = server.stats["requests"], server.stats["calls"]
            met = server.stats["met"]
            times[faults] = took
            rows = RunFolder(out).table(ResultRecord).records()
            failures = RunFolder(out).table(CallFailureRecord).records()
            stored = Counter(r.question_id for r in rows)
            twice = sorted(k for k, c in calls.items() if c > 1)
            faulted = sorted(k for k in range(n) if faults and plan.fault_of(k))
            correct = sum(r.correct for r in rows)
            checks = {
                "every question stored once": len(stored) == n and set(stored.values()) == {1},
                "no failure left": not failures and job.unanswered == 0,
                "every fault met": met == (dict(planned) if faults else {}),
                "asked twice exactly the faulted": twice == faulted,
                "requests = questions + faults": requests == n + len(faulted),
                "accuracy exact": correct == expected_right,
            }
            print(
                f"{'faulted' if faults else 'fault-free'}: {n} questions, {requests} requests in "
                f"{took:.1f} s ({requests / took:.0f} req/s); faults met "
                f"{met or 'none'}; accuracy {correct}/{n}; "
                + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in checks.items())
            )
            if not all(checks.values()):
                raise SystemExit(1)
    bound = times[False] + args.timeout + 1.0
    print(
        f"faulted run {times[True]:.1f} s against the bound {bound:.1f} s (fault-free "
        f"{times[False]:.1f} s + one timeout {args.timeout:g} s + a retry pause of at most 1 s): "
        + ("within" if times[True] <= bound else "OVER")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["throughput", "zero", "soak"])
    parser.add_argument("--latency", type=float, default=None)
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args()
    defaults = {
        "throughput": {"latency": 1.0, "concurrency": 64},
        "zero": {"latency": 0.0, "concurrency": 16, "questions": 3000},
        "soak": {"latency": 0.02, "concurrency": 64, "questions": 10000},
    }[args.what]
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    {"throughput": throughput, "zero": zero, "soak": soak}[args.what](args)


if __name__ == "__main__":
    main()
