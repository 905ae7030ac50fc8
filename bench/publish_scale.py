"""Publish at scale: time and peak memory of the publish stage on a synthetic run of many
reviewed questions (default 20,000 on 4,000 images of about 60 KB), against the size of the
images, to show that memory stays bounded (images are streamed, never all held at once).

    python bench/publish_scale.py [--questions 20000] [--images 4000] [--side 256] [--keep DIR]

Prints the figures; writes under a temporary folder unless --keep names one.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DIMENSIONS = (
    "instances_counting",
    "instance_attributes",
    "instance_location",
    "scene_understanding",
)


def build(root: Path, questions: int, images: int, side: int) -> int:
    """A run folder with `images` noise JPEGs and `questions` accepted candidates; the bytes of
    the images stored."""
    from benchfoundry.core.records import CandidateRecord, ImageRecord, ReviewRecord, ScoredRecord
    from benchfoundry.decisions.reviews import candidate_hash, now
    from benchfoundry.devtools.synthetic import noise_images
    from benchfoundry.storage.tables import RunFolder

    run = RunFolder(root)
    ids, stored, batch = [], 0, []
    for record in noise_images(images, side, quality=90):  # in parts of 32, as ingest writes them
        ids.append(record.image_id)
        stored += record.n_bytes
        batch.append(record)
        if len(batch) == 32 or len(ids) == images:
            run.table(ImageRecord).append(batch)
            batch = []
    candidates, scored, reviews = [], [], []
    for i in range(questions):
        qid = f"q{i:06d}"
        c = CandidateRecord(
            question_id=qid, image_id=ids[i % images], dimension=DIMENSIONS[i % 4],
            question=f"Question {i} about the picture?", hint=None,
            options=[f"choice {i}-{j}" for j in range(4)], answer="ABCD"[(i // 4) % 4],
            category=None, l2_category=None, split=None, generator="bench", prompt_id=None,
            prompt_hash=None, evidence=[], source="bench", meta={}, raw_output=None,
        )  # fmt: skip
        candidates.append(c)
        scored.append(
            ScoredRecord(
                question_id=qid,
                image_id=c.image_id,
                dimension=c.dimension,
                answer=c.answer,
                hits_text=0,
                hits_text_circular=None,
                n_text_models=1,
                text_hit_by=[],
                hits_vlm=i % 2,
                hits_vlm_circular=None,
                n_vlm_models=1,
                vlm_hit_by=[],
                flags=[],
                difficulty="hard",
                decision="selected",
                reason="bench",
                rank=i,
            )  # fmt: skip
        )
        reviews.append(
            ReviewRecord(
                question_id=qid,
                reviewer="ann",
                decision="accept",
                tool="bench",
                candidate_hash=candidate_hash(c),
                decided_at=now(),
            )  # fmt: skip
        )
    run.table(CandidateRecord).append(candidates)
    run.table(ScoredRecord).append(scored)
    run.table(ReviewRecord).append(reviews)
    return stored


def publish(root: Path, to: Path) -> None:
    """In a fresh process: the publish stage alone, then its time and peak memory as JSON."""
    from benchfoundry.pipeline.registry import STAGES, StageRun
    from benchfoundry.tasks.publish.options import PublishOptions

    stage = StageRun.make(root, publish=PublishOptions(to=to))
    stage.name = "scale"
    start = time.perf_counter()
    summary = STAGES["publish"].run(stage)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "release": summary.release}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=20_000)
    parser.add_argument("--images", type=int, default=4_000)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--publish-only", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish_only:
        publish(*args.publish_only)
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-publish-"))
    start = time.perf_counter()
    stored = build(folder / "run", args.questions, args.images, args.side)
    print(f"run: {args.questions} questions on {args.images} images, {stored / 2**20:.0f} MiB of "
          f"images, built in {time.perf_counter() - start:.0f} s")  # fmt: skip
    done = subprocess.run(
        [sys.executable, __file__, "--publish-only", str(folder / "run"), str(folder / "releases")],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    release = Path(figures["release"])
    size = sum(p.stat().st_size for p in release.rglob("*") if p.is_file())
    print(f"publish: {figures['seconds']:.1f} s, peak RSS {figures['peak_mb']:.0f} MiB "
          f"(images {stored / 2**20:.0f} MiB), release {size / 2**20:.0f} MiB in "
          f"{len(list((release / 'data').glob('*.parquet')))} Parquet files")  # fmt: skip


if __name__ == "__main__":
    main()
