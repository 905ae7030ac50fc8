"""Invariance of questions and keys to changes a person would not notice.

    python bench/invariance.py [--scenes 12] [--flat 6] [--contact 6] [--hard 1] [--packaged]
                               [--variants exif6,quarter,...] [--seed 7]

Renders the bench's drawings (object and text scenes, flat and contact scenes, `--hard` of each
hard-drawing family) and, with `--packaged`, takes the photos the demo ingests from installed
packages; writes each as given and in every variant of `devtools/invariance.VARIANTS` (EXIF
orientations 1-8, a quarter and four times the size, JPEG 90, WebP, BMP, GIF, TIFF, CMYK JPEG,
palette PNG, RGBA on a transparent background, a margin of its border colour); runs ingest, extract and the
template generator over all of them in one run folder, and prints per variant the share of the
pictures' questions asked again and, among those, the share whose key is the same (goal: at
least 99% of questions and 100% of keys), with the first changed keys. No truth is needed. A
margin moves things in the frame: its goal is on the questions that name no place in it (a
question such as "Where in the image is the red object?" may rightly change with a margin). A
last column gives, for a variant that resizes, the share kept over the pictures it leaves
legible (the others leave every picture as legible as it was, "(all)"): at a quarter of
the size a 28 px disc is 7 px (it may as well be an octagon) and a 26 px font 6.5 px
(`devtools.invariance.legible`, from the drawings' truth).
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402


def pictures(work: Path, args: argparse.Namespace) -> dict[str, object]:
    from PIL import Image

    from benchfoundry.devtools.hard_drawings import write_hard_corpus
    from benchfoundry.devtools.synthetic import write_corpus

    out: dict[str, object] = {}
    if args.scenes or args.flat or args.contact:
        n_text = args.scenes // 4
        write_corpus(
            work / "corpus", args.scenes - n_text, n_text, args.seed, args.contact, args.flat
        )
        for path in sorted((work / "corpus" / "images").iterdir()):
            out[f"drawing-{path.stem}"] = Image.open(path).convert("RGB")
    if args.hard:
        write_hard_corpus(work / "hard", args.seed, args.hard)
        for path in sorted((work / "hard" / "images").iterdir()):
            out[f"hard-{path.stem}"] = Image.open(path).convert("RGB")
    if args.packaged:
        from benchfoundry.core import packaged

        for package in ("scikit-image", "scikit-learn", "matplotlib"):
            for photo in packaged.photos(package):
                try:
                    image = Image.open(io.BytesIO(photo.path.read_bytes()))
                    out[f"photo-{Path(photo.name).stem}"] = image.convert("RGB")
                except OSError as exc:  # the demo's ingest refuses it too (quarantined)
                    print(f"skipped {photo.source}: {exc}")
    # `~` separates a picture's name from its variant's in the files written.
    return {name.replace("~", "-"): image for name, image in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=12, help="object and text scenes")
    parser.add_argument("--flat", type=int, default=6, help="flat scenes")
    parser.add_argument("--contact", type=int, default=6, help="contact scenes")
    parser.add_argument("--hard", type=int, default=0, help="hard drawings per family")
    parser.add_argument("--packaged", action="store_true", help="the demo's packaged photos too")
    parser.add_argument("--variants", default="", help="comma-separated (default: all)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--show", type=int, default=8, help="changed keys, and questions lost, to print (each)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-invariance-"))
    env.configure(work, console_level="CRITICAL")
    from benchfoundry.devtools.generate_check import build_templates
    from benchfoundry.devtools.invariance import (
        SCALE,
        TEXT_FLOOR,
        VARIANTS,
        compare,
        legible,
        not_kept,
        smallest,
        write_variants,
    )
    from benchfoundry.extractors.shapes import SUBPIXEL_SIDE

    chosen = [v for v in args.variants.split(",") if v] or list(VARIANTS)
    started = time.perf_counter()
    found = pictures(work, args)
    files = write_variants(found, work / "variants" / "images", chosen)  # type: ignore[arg-type]
    run, _ = build_templates(work, work / "variants")
    truth = work / "corpus" / "truth.jsonl"
    sizes = smallest(truth, "drawing-") if truth.exists() else {}
    result = compare(run, lambda picture, variant: legible(sizes, picture, variant))
    refused = not_kept(run)
    print(
        f"{result.pictures} pictures ({result.asked_pictures} asked something as given), "
        f"{files} files, {time.perf_counter() - started:.0f} s; run folder {run.root}"
    )
    print(
        f"{'variant':<16} {'questions kept':>20} {'keys kept':>18} {'new':>5} {'refused':>8}"
        f" {'naming no place in the frame':>30} {'of pictures left legible':>26}"
    )
    worst_q, worst_k = 1.0, 1.0
    for name, o in sorted(result.by_variant.items()):
        # a margin moves things in the frame: what it must keep is what names no place in it
        share = o.frame_free_share if name == "margin" else o.kept_share
        worst_q, worst_k = min(worst_q, share), min(worst_k, o.key_share)
        free = o.questions - o.in_frame
        # only a resize changes what is legible; elsewhere the column would repeat the first
        readable = (
            f"{o.legible_kept:>12}/{o.legible:<6} {100 * o.legible_share:5.1f}%"
            if name in SCALE
            else f"{'(all)':>26}"
        )
        print(
            f"{name:<16} {o.kept:>6}/{o.questions:<6} {100 * o.kept_share:5.1f}% "
            f"{o.keys_same:>6}/{o.kept:<6} {100 * o.key_share:5.1f}% {o.new:>5} "
            f"{refused.get(name, 0):>8} {o.kept - o.in_frame_kept:>15}/{free:<6}"
            f" {100 * o.frame_free_share:5.1f}% {readable}"
        )
    print(
        f"lowest: questions kept {100 * worst_q:.1f}% (for a margin, of those naming no place in "
        f"the frame), keys kept {100 * worst_k:.1f}%"
    )
    print(
        f"(legible: every shape {SUBPIXEL_SIDE:g} px across or more, every font {TEXT_FLOOR:g} px"
        " or more, at the variant's size, by the drawings' truth; pictures without truth count)"
    )
    for what in ("changed", "lost"):
        shown = 0
        for name, o in sorted(result.by_variant.items()):
            for line in getattr(o, what):
                if shown < args.show:
                    print(f"  {what} ({name}) {line}")
                    shown += 1


if __name__ == "__main__":
    main()
