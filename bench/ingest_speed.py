"""Time ingestion of N generated images; print images per second and peak memory.

    python bench/ingest_speed.py --images 300 [--scale 2] [--flow]

The stage logic runs first without Prefect, then (with --flow) as the Prefect `ingest` flow on
the embedded local API, after one warm-up run so that server start-up is not counted.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402


def make_images(folder: Path, n: int, scale: int) -> int:
    """Render n synthetic scenes as PNG (scaled up `scale` times); return total bytes."""
    from benchfoundry.devtools.synthetic import make_scenes, png_bytes, render

    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for scene in make_scenes(n_objects=n - n // 4, n_text=n // 4, seed=11):
        image = render(scene)
        if scale > 1:
            image = image.resize((image.width * scale, image.height * scale))
        data = png_bytes(image)
        (folder / f"{scene.scene_id}.png").write_bytes(data)
        total += len(data)
    return total


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument(
        "--scale", type=int, default=1, help="upscale the 384x288 scenes this many times"
    )
    parser.add_argument("--flow", action="store_true", help="also time the Prefect flow")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    env.configure(work, console_level="CRITICAL")

    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.sources.models import FolderSource
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.ingest.options import IngestOptions
    from benchfoundry.tasks.ingest.stage import run as ingest_stage

    size = make_images(work / "images", args.images, args.scale)
    print(
        f"{args.images} PNG images, {384 * args.scale}x{288 * args.scale}, {size / 2**20:.1f} MiB on disk"
    )
    source = FolderSource(path=work / "images")
    options = IngestOptions()
    rss_before = peak_rss_mib()
    start = time.perf_counter()
    summary = ingest_stage(
        StageRun.make(RunFolder(work / "run-plain"), sources=[source], ingest=options)
    )
    elapsed = time.perf_counter() - start
    print(
        f"stage logic (no Prefect): {elapsed:.2f} s, {args.images / elapsed:.1f} images/s, "
        f"added {summary.images_added}; peak RSS {peak_rss_mib():.0f} MiB (before: {rss_before:.0f} MiB)"
    )

    start = time.perf_counter()
    again = ingest_stage(
        StageRun.make(RunFolder(work / "run-plain"), sources=[source], ingest=options)
    )
    print(
        f"rerun on the same run folder: {time.perf_counter() - start:.2f} s, added {again.images_added}"
    )

    if args.flow:
        from benchfoundry.flows.ingest import ingest

        ingest(
            StageRun.make(
                str(work / "warm-up"),
                sources=[source],
                ingest=IngestOptions(batch_size=options.batch_size),
            )
        )
        start = time.perf_counter()
        flow_summary = ingest(
            StageRun.make(str(work / "run-flow"), sources=[source], ingest=options)
        )
        elapsed = time.perf_counter() - start
        print(
            f"Prefect flow (server warm): {elapsed:.2f} s, {args.images / elapsed:.1f} images/s, "
            f"added {flow_summary.images_added}; peak RSS {peak_rss_mib():.0f} MiB"
        )
        start = time.perf_counter()
        flow_again = ingest(StageRun.make(str(work / "run-flow"), sources=[source], ingest=options))
        rerun = time.perf_counter() - start
        print(f"Prefect flow rerun: {rerun:.2f} s, added {flow_again.images_added}")
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
