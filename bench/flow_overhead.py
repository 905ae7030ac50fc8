"""What Prefect costs per flow and per task here, apart from any work: a `build`-like flow calls
7 empty stage flows, each submitting T no-op tasks, on the embedded API server.

Prints, with the stage flows' heartbeat threads (Prefect's default) and without
(`benchfoundry.pipeline.prefect_server.nested_flows`, what the build does): the median seconds per stage
flow (and their range), and the CPU seconds the embedded server spent; with `--tasks T` the cost
per task is the difference from the run without tasks. Its wall time varies from flow to flow:
a stage flow's first call to the server (the task run that stands for the flow in its parent)
waits while the server writes a batch of what earlier flows sent it, so the first flow is the
fastest. The server's batches are `benchfoundry.pipeline.prefect_server.SERVER_BATCHES`; set their
variables in the environment to measure Prefect's defaults
(`PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE=1`,
`PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE=20`).

    python bench/flow_overhead.py [--tasks 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def child(tasks: int, heartbeats: bool) -> None:
    from benchfoundry.core import env

    env.configure(console_level="CRITICAL")
    import psutil
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from benchfoundry.pipeline.prefect_server import embedded_server, nested_flows

    noop = task(lambda x: x, name="noop", cache_policy=NO_CACHE)

    @flow(name="stage")
    def stage() -> None:
        for future in [noop.submit(j) for j in range(tasks)]:
            future.result()

    @flow(name="build")
    def build() -> list[float]:
        seconds = []
        with contextlib.nullcontext() if heartbeats else nested_flows():
            for _ in range(7):
                start = time.perf_counter()
                stage()
                seconds.append(time.perf_counter() - start)
        return seconds

    with embedded_server():
        (server,) = psutil.Process().children()
        before = sum(server.cpu_times()[:2])
        seconds = build()
        cpu = sum(server.cpu_times()[:2]) - before
    print(
        json.dumps(
            {
                "per_flow": statistics.median(seconds),
                "range": [min(seconds), max(seconds)],
                "server_cpu": cpu,
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1] == "yes")
        return
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
        env.update(PREFECT_HOME=home, DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false")
        found = {}
        for tasks in sorted({0, args.tasks}):
            for beats in ("yes", "no"):
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(tasks), beats],
                    capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=True,
                )  # fmt: skip
                found[tasks, beats] = json.loads(done.stdout.strip().splitlines()[-1])
                shown = found[tasks, beats]
                print(
                    f"{tasks} tasks a flow, heartbeat threads {beats}: "
                    f"{shown['per_flow']:.2f} s per stage flow "
                    f"({shown['range'][0]:.2f}-{shown['range'][1]:.2f}), "
                    f"embedded server {shown['server_cpu']:.1f} CPU s for 7 flows"
                )
        if args.tasks:
            t = args.tasks
            wall = (found[t, "no"]["per_flow"] - found[0, "no"]["per_flow"]) / t
            cpu = (found[t, "no"]["server_cpu"] - found[0, "no"]["server_cpu"]) / (7 * t)
            print(
                f"per task: {wall * 1000:.0f} ms of the flow's time, {cpu * 1000:.0f} ms of server CPU"
            )


if __name__ == "__main__":
    main()
