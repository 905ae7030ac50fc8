"""An incremental build against a full one: a build over a folder of synthetic scenes, then the
folder grows by 10% and the same build runs again in the same run folder; beside it, a full
build of the grown folder in a fresh run folder. Prints, per build, the images extracted, the
candidates generated, the model calls made (not replayed from the cache), the seconds, and what
the second release changed against its parent.

    python bench/incremental.py [--scenes 60] [--grow 0.1]

Each build is `benchfoundry build SPEC --json` in its own process, as a curator runs it (the
seconds include the command's start and its embedded Prefect server)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SPEC = """name: growing
sources: [{{kind: folder, path: {images}}}]
stages: [ingest, extract, generate, filter, select, review, publish]
options:
  extract: {{ocr: none}}
  select: {{target: 100000}}
  review: {{auto: true}}
  publish: {{to: {releases}, allow_unreviewed: true, letter_tolerance: 1.0, longest_answer_share: 1.0}}
models: {{text_only: [blind/longest, blind/similar, smollm2]}}
output: {out}
"""


def build(images: Path, out: Path, releases: Path, home: Path) -> tuple[dict, float]:
    spec = out.parent / f"{out.name}.yaml"
    spec.write_text(SPEC.format(images=images, releases=releases, out=out), encoding="utf-8")
    return timed_build(spec, home)


def timed_build(spec: Path, home: Path) -> tuple[dict, float]:
    """`benchfoundry build SPEC --json` in its own process with its own Prefect home: the
    summary and the seconds it took."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(PREFECT_HOME=str(home), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "benchfoundry", "build", str(spec), "--json"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=3600,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout), seconds


def calls(out: Path, before: dict | None = None) -> int:
    """Model calls made (not replayed from the cache) in the run's usage, less `before`'s."""
    usage = json.loads((out / "usage.json").read_text(encoding="utf-8"))
    made = sum(
        m.get("calls", 0) - m.get("cached", 0) for stage in usage.values() for m in stage.values()
    )
    return made - (before or 0)


def line(label: str, summary: dict, seconds: float, made: int) -> str:
    s = summary["summaries"]
    publish = s["publish"]
    changes = ", ".join(f"{k} {v}" for k, v in publish.get("changes", {}).items()) or "first"
    return (
        f"{label:<22} images extracted {s['extract']['images_extracted']:>4}, "
        f"candidates generated {s['generate']['candidates_added']:>5}, "
        f"model calls {made:>6}, {seconds:6.1f} s; release {publish['version']} "
        f"({publish['rows']} questions; vs parent: {changes})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=60)
    parser.add_argument("--grow", type=float, default=0.1)
    args = parser.parse_args()

    from benchfoundry.devtools.synthetic import write_corpus

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "prefect"
        n_new = max(1, round(args.scenes * args.grow))
        write_corpus(root / "all", n_objects=args.scenes + n_new, n_text=0, seed=1)
        pool = sorted((root / "all" / "images").iterdir())
        images = root / "images"
        images.mkdir()
        for path in pool[: args.scenes]:
            shutil.copy(path, images / path.name)
        first, t1 = build(images, root / "run", root / "releases", home)
        made1 = calls(root / "run")
        print(line(f"first ({args.scenes} images)", first, t1, made1), flush=True)
        for path in pool[args.scenes :]:
            shutil.copy(path, images / path.name)
        again, t2 = build(images, root / "run", root / "releases", home)
        print(line(f"incremental (+{n_new})", again, t2, calls(root / "run", made1)), flush=True)
        full, t3 = build(images, root / "full", root / "releases-full", home)
        print(line(f"full ({args.scenes + n_new} images)", full, t3, calls(root / "full")))


if __name__ == "__main__":
    main()
