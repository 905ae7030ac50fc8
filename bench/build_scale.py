"""Orchestration overhead and peak memory of a whole build at several sizes.

For each size N, the same build (ingest, extract without OCR, generate, filter with the packaged
MiniLM embedder's `blind/similar` and blind baselines, select, review, publish) over N synthetic
scenes runs twice, each in a fresh run folder and its own process (SmolLM2 in the filter would
make a 2,000-image build about two hours per run here; its calls are measured apart, in
`bench/evaluate_cost.py` and `bench/qc_cost.py`):

- plain: every stage's entry point called in turn, its batches on a thread pool with the same
  window as Prefect's (`ahead` batches in flight), and no Prefect at all;
- prefect: the `build` flow (a flow per stage, Prefect tasks for the batches on the thread
  pool), timed from the flow call (the embedded API server is started before).

With `--repeats R` each mode runs R times, alternating, and the medians are compared (a
200-image build here varies by several seconds from run to run, as much as the overhead being
measured). Prints, per size: both wall times (median, and the range when repeated), the overhead
(prefect less plain) as a share of the plain build and of its model time (the extractors'
backend seconds plus the filter stage, whose time is its model calls), each stage's plain
seconds, the plain build's peak RSS after each stage (where memory grows), the embedded API
server's CPU seconds (a process of its own, whose work competes with the build's on two cores)
and each mode's peak RSS; then the peak RSS ratio between the largest and the smallest size.

    python bench/build_scale.py [--sizes 200,2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SPEC = """name: scale
sources: [{{kind: folder, path: {images}}}]
stages: [ingest, extract, generate, filter, select, review, publish]
options:
  extract: {{ocr: none}}
  filter: {{blind: [blind/longest], chance: [blind/random]}}
  select: {{target: 100000}}
  review: {{auto: true}}
  publish: {{to: {releases}, allow_unreviewed: true, letter_tolerance: 1.0, longest_answer_share: 1.0}}
models: {{text_only: [blind/similar]}}
output: {out}
"""


class ThreadMapper:
    """The Prefect mapper's schedule without Prefect: at most `ahead` batches in flight on
    threads, results in job order."""

    def __init__(self, pool) -> None:
        self.pool = pool

    def map(self, fn, jobs, *, label, total=None, ahead=2, retries=0):  # noqa: ARG002
        from benchfoundry.core.batches import windowed

        yield from windowed(lambda *args: self.pool.submit(fn, *args), jobs, label, total, ahead)


def child(mode: str, spec_path: str) -> None:
    """One build in this process; prints a JSON line of what it measured."""
    from benchfoundry.core import env

    env.configure(console_level="CRITICAL")
    from benchfoundry.pipeline.registry import STAGES, StageRun
    from benchfoundry.pipeline.spec import load_spec

    spec = load_spec(spec_path)
    stage_seconds: dict[str, float] = {}
    stage_peaks: dict[str, float] = {}  # peak RSS so far after each stage (plain only)
    if mode == "plain":
        from benchfoundry.storage.tables import RunFolder

        RunFolder(spec.output).root.mkdir(parents=True, exist_ok=True)
        context = StageRun.from_spec(spec, str(spec.output), spec.stages)
        from concurrent.futures import ThreadPoolExecutor

        start = time.perf_counter()
        summaries = {}
        with ThreadPoolExecutor() as pool:
            mapper = ThreadMapper(pool)
            for name in [n for n in STAGES if n in spec.stages]:
                began = time.perf_counter()
                summaries[name] = STAGES[name].run(context, mapper)
                stage_seconds[name] = time.perf_counter() - began
                stage_peaks[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        seconds = time.perf_counter() - start
        extract = summaries["extract"].seconds_by_backend
        rows = summaries["publish"].rows
        server_cpu = 0.0
    else:
        import psutil

        from benchfoundry.flows.build import build
        from benchfoundry.pipeline.prefect_server import embedded_server

        with embedded_server():
            (server,) = psutil.Process().children()
            before = sum(server.cpu_times()[:2])
            start = time.perf_counter()
            summary = build(spec_path)
            seconds = time.perf_counter() - start
            server_cpu = sum(server.cpu_times()[:2]) - before
        extract = summary.of("extract").seconds_by_backend
        rows = summary.of("publish").rows
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "seconds": seconds,
                "stages": stage_seconds,
                "stage_peaks": stage_peaks,
                "extract_backends": extract,
                "rows": rows,
                "peak_rss_mib": peak,
                "server_cpu_s": server_cpu,
            }
        ),
        flush=True,
    )


def run_child(mode: str, spec: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(PREFECT_HOME=str(home), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false")
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(spec)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=4 * 3600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _shown(runs: list[dict], key: str, digits: int = 1) -> str:
    """The median of one figure over repeated runs, with its range when there are several."""
    values = [m[key] for m in runs]
    shown = f"{_median(values):.{digits}f}"
    if len(values) > 1:
        shown += f" ({min(values):.{digits}f}-{max(values):.{digits}f})"
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,2000")
    parser.add_argument("--repeats", type=int, default=1, help="runs per mode, alternating")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "SPEC"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return

    from benchfoundry.devtools.synthetic import write_corpus

    sizes = [int(s) for s in args.sizes.split(",")]
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in sizes:
            write_corpus(root / f"scenes-{n}", n_objects=n, n_text=0, seed=5)
            measured: dict[str, list[dict]] = {"plain": [], "prefect": []}
            for r in range(args.repeats):
                for mode in ("plain", "prefect"):
                    spec = root / f"{mode}-{n}-{r}.yaml"
                    spec.write_text(
                        SPEC.format(
                            images=root / f"scenes-{n}" / "images",
                            releases=root / f"releases-{mode}-{n}-{r}",
                            out=root / f"run-{mode}-{n}-{r}",
                        ),
                        encoding="utf-8",
                    )
                    measured[mode].append(run_child(mode, spec, root / "prefect"))
            plains, flows = measured["plain"], measured["prefect"]
            plain_s = _median([m["seconds"] for m in plains])
            flow_s = _median([m["seconds"] for m in flows])
            model = _median(
                [sum(m["extract_backends"].values()) + m["stages"]["filter"] for m in plains]
            )
            overhead = flow_s - plain_s
            print(
                f"{n} images ({plains[0]['rows']} released questions): "
                f"plain {_shown(plains, 'seconds')} s, prefect {_shown(flows, 'seconds')} s; "
                f"overhead {overhead:+.1f} s = {overhead / plain_s:+.1%} of the plain build, "
                f"{overhead / model:+.1%} of its model time ({model:.1f} s)"
            )
            stages = {k: _median([m["stages"][k] for m in plains]) for k in plains[0]["stages"]}
            print("  plain per stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
            print(
                "  plain peak RSS after each stage: "
                + ", ".join(f"{k} {v:.0f}" for k, v in plains[0]["stage_peaks"].items())
                + " MiB"
            )
            print(
                f"  embedded API server: {_shown(flows, 'server_cpu_s')} CPU s during the build",
            )
            print(
                f"  peak RSS: plain {_shown(plains, 'peak_rss_mib', 0)} MiB, "
                f"prefect {_shown(flows, 'peak_rss_mib', 0)} MiB",
                flush=True,
            )
            peaks[n] = max(m["peak_rss_mib"] for m in plains + flows)
    if len(sizes) > 1:
        small, big = min(sizes), max(sizes)
        print(
            f"peak RSS {big} vs {small} images: {peaks[big]:.0f} / {peaks[small]:.0f} MiB = "
            f"{peaks[big] / peaks[small]:.2f}x"
        )


if __name__ == "__main__":
    main()
