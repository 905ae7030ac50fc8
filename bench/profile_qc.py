"""Where quality control's time goes on the embedded models: seconds and calls per model of the
filter and consensus steps, cold (no response cache), and the functions that take the time.

    python bench/profile_qc.py [--run datasets/runs/demo] [--top 15] [--no-profile]
                               [--limit N] [--models NAME ...]

It copies the candidates, images and visual facts of a run folder that has been through
generate (default: the demo's; `make demo` makes it) into a fresh folder with no response cache,
then runs the spec's filter and consensus steps model by model under cProfile and prints, per
model, calls and seconds, then the functions with the most time of their own and with the most
time under them. `--limit N` keeps the candidates of the first images (in image order) until
there are N, so a change can be timed in a minute; `--models` times only the models named.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=REPO / "datasets" / "runs" / "demo")
    parser.add_argument("--spec", type=Path, default=REPO / "datasets" / "demo.yaml")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--no-profile", action="store_true", help="time only (cProfile adds cost)")
    parser.add_argument("--limit", type=int, help="candidates of whole images, at least N")
    parser.add_argument("--models", nargs="+", help="time only these models")
    args = parser.parse_args()
    if not (args.run / "candidates").is_dir():
        sys.exit(f"{args.run} has no candidates: run `make demo` (or build a spec) first")
    work = Path(tempfile.mkdtemp(prefix="bench-profile-qc-"))
    env.configure(work, console_level="CRITICAL")
    import torch

    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.pipeline.spec import load_spec
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.qc.stage import ask, text_members, vlm_members

    for table in ("images", "visual_facts", "candidates", "quarantine"):
        if (args.run / table).is_dir():
            shutil.copytree(args.run / table, work / "run" / table)
    if args.limit:
        keep_first_images(work / "run" / "candidates", args.limit)
    run = RunFolder(work / "run")
    spec = load_spec(args.spec)
    steps = [
        (
            "filter",
            text_members(spec.options.filter, spec.models),
            "text_only",
            spec.options.filter,
        ),
        ("consensus", vlm_members(spec.models), "consensus", spec.options.consensus),
    ]
    print(f"torch threads {torch.get_num_threads()}, run copied to {run.root}")
    print(f"{'step':<10} {'model':<22} {'questions':>9} {'calls':>6} {'seconds':>8} {'s/call':>7}")
    profile = cProfile.Profile()
    totals: dict[str, float] = {}
    for step, members, mode, options in steps:
        for member in members:
            if args.models and member[0] not in args.models:
                continue
            gateway = gateway_for_run(run.root, stage=step)
            started = time.perf_counter()
            if not args.no_profile:
                profile.enable()
            summary = ask(run, gateway, [member], mode, options.circular, options.max_tokens)
            if not args.no_profile:
                profile.disable()
            seconds = time.perf_counter() - started
            totals[step] = totals.get(step, 0.0) + seconds
            calls = summary.calls_made
            print(
                f"{step:<10} {member[0]:<22} {summary.candidates:>9} {calls:>6} "
                f"{seconds:>8.1f} {seconds / max(1, calls):>7.3f}"
            )
    print("total: " + ", ".join(f"{k} {v:.1f} s" for k, v in totals.items()))
    if args.no_profile:
        return
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.top)
        lines = out.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if "ncalls" in line)
        print(f"\nTop {args.top} by {order}:")
        print("\n".join(lines[start : start + args.top + 1]))


def keep_first_images(folder: Path, limit: int) -> None:
    """Rewrite a candidates table with the candidates of its first images (by id) only, whole
    images until there are at least `limit` (questions about one image share a prompt prefix)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    table = ds.dataset(folder).to_table()
    counts = table.group_by("image_id").aggregate([("question_id", "count")])
    counts = counts.sort_by("image_id")
    kept, total = [], 0
    for image, n in zip(
        counts["image_id"].to_pylist(), counts["question_id_count"].to_pylist(), strict=True
    ):
        if total >= limit:
            break
        kept.append(image)
        total += n
    shutil.rmtree(folder)
    folder.mkdir()
    pq.write_table(
        table.filter(pc.is_in(table["image_id"], pa_array(kept))), folder / "part-limit.parquet"
    )


def pa_array(values: list[str]):  # noqa: ANN201
    import pyarrow as pa

    return pa.array(values, pa.string())


if __name__ == "__main__":
    main()
