"""How often template questions' answer keys are right, on synthetic scenes with known truth.

    python bench/generate_accuracy.py [--scenes 120] [--contact 40] [--flat 40] [--seed 7]
                                      [--clips 0 --procedures 0 --keyframes 4]
                                      [--hard [--per-family 3] [--single-reading]]

Renders scenes (object and text scenes, contact scenes of shapes that touch, overlap or
contain one another, and flat scenes: one or two large pure-colour shapes on white, hard-edged
or anti-aliased, the first images a newcomer draws), runs ingest, extract and the template generator, then checks every
question's key against the truth (goal: at least 98% for every template kind), per template
kind, and prints the letter spread and, per dimension, candidates and why images got none.

With `--clips`/`--procedures` it renders video clips of known actions instead (SSv2-style single
actions and multi-step procedures), builds ingest, extract and generate from them, checks each
temporal key against what the clips were drawn to show (`drawn.jsonl`, `devtools/clip_truth`), not
the annotation files the generator read, and prints clips ingested and keyframes extracted per
second and the process's peak memory.

With `--hard` it renders the hard drawings instead (`devtools/hard_drawings`: overlapping and
touching shapes of one colour, shapes beyond circle, square and triangle, a dot, outlines,
stripes, checkerboards, gradients, JPEG, anti-aliased drawings, words and logos, `--per-family`
of each) beside packaged pictures and photographs with hand-written truth, and prints per
template kind the questions asked, keys right and the images not asked with their reasons; per
drawing family asked and right; the share of drawings asked anything; the first wrong keys.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=120, help="object and text scenes")
    parser.add_argument("--contact", type=int, default=40, help="contact scenes besides")
    parser.add_argument("--flat", type=int, default=40, help="flat scenes besides")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--clips", type=int, default=0, help="single-action clips (video mode)")
    parser.add_argument("--procedures", type=int, default=0, help="procedure videos (video mode)")
    parser.add_argument("--keyframes", type=int, default=4, help="keyframes per segment")
    parser.add_argument("--hard", action="store_true", help="the hard drawings instead")
    parser.add_argument("--per-family", type=int, default=3, help="hard drawings per family")
    parser.add_argument(
        "--single-reading",
        action="store_true",
        help="with --hard: the second readings made by the first ones' backends (so they always "
        "agree): the keys a single reading writes, and the flag's hit rate on its wrong keys",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    env.configure(work, console_level="CRITICAL")
    if args.clips or args.procedures:
        temporal(work, args)
        return
    if args.hard:
        hard(work, args)
        return
    from benchfoundry.devtools.generate_check import template_key_accuracy

    result = template_key_accuracy(work, args.scenes, args.seed, args.contact, args.flat)
    scenes = args.scenes + args.contact + args.flat
    print(
        f"{result.questions} template questions on {scenes} synthetic scenes ({args.contact} "
        f"contact, {args.flat} flat): {result.right} keys right = {100 * result.accuracy:.1f}%"
    )
    for kind, (right, total) in sorted(result.by_kind.items()):
        print(f"  {kind:<28} {right}/{total} = {100 * right / max(1, total):.1f}%")
    print("answer letters: " + ", ".join(f"{k} {v}" for k, v in sorted(result.letters.items())))
    print("per dimension (candidates, and images not asked about, by reason):")
    for dimension, counts in result.per_dimension.items():
        print(f"  {dimension:<22} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for line in result.wrong[:10]:
        print("  wrong:", line)
    print_flags(result.flags)


def print_flags(flags) -> None:  # noqa: ANN001  (devtools.flag_check.FlagRates)
    """The evidence reader's "possibly flawed" flag: hit rate on wrong keys (the generator's,
    and seeded ones: a wrong option put as the key), false alarms on right keys."""
    print("possibly-flawed flag (the evidence reader; abstentions flag nothing here):")
    for sort, what in (
        ("wrong", "wrong keys flagged (hit rate)"),
        ("seeded", "seeded wrong keys flagged (hit rate)"),
        ("right", "right keys flagged (false alarms)"),
    ):
        print(
            f"  {what:<38} {flags.flagged[sort]}/{flags.keys[sort]} = "
            f"{100 * flags.rate(sort):.1f}%  (abstained on {flags.abstained[sort]})"
        )
    for kind, tally in sorted(flags.by_kind.items()):
        print(f"  {kind:<20} " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    for line in flags.false_alarms[:8]:
        print("  false alarm:", line)
    for line in flags.missed[:8]:
        print("  missed:", line)


def hard(work: Path, args: argparse.Namespace) -> None:
    import time

    from benchfoundry.devtools.generate_check import hard_key_accuracy

    started = time.perf_counter()
    result = hard_key_accuracy(work, args.seed, args.per_family, args.single_reading)
    asked = sum(t for _, t in result.by_kind.values())
    right = sum(r for r, _ in result.by_kind.values())
    print(
        f"{result.drawings} hard drawings and pictures ({args.per_family} per drawn family, "
        f"seed {args.seed}): {result.asked_drawings} got at least one question = "
        f"{100 * result.asked_drawings / max(1, result.drawings):.1f}%"
        + (f"; {result.not_ingested} not ingested" if result.not_ingested else "")
    )
    print(f"{asked} template questions: {right} keys right = {100 * right / max(1, asked):.1f}%")
    print("per template kind: asked, right, right %; images not asked, by reason:")
    for kind in sorted(set(result.by_kind) | set(result.not_asked)):
        r, t = result.by_kind.get(kind, (0, 0))
        reasons = ", ".join(f"{k} {v}" for k, v in result.not_asked.get(kind, {}).most_common())
        print(
            f"  {kind:<20} asked {t:>3}  right {r:>3}  {100 * r / max(1, t):5.1f}%"
            f"   not asked: {reasons or '-'}"
        )
    print("per drawing family: drawings, asked, right:")
    for family, n in result.family_drawings.items():
        r, t = result.by_family.get(family, (0, 0))
        print(f"  {family:<14} {n:>2} drawings  asked {t:>3}  right {r:>3}")
    print("first wrong keys (each kind in turn):")
    for line in result.first_wrong(15):
        print("  wrong:", line)
    print_flags(result.flags)
    print(f"took {time.perf_counter() - started:.1f} s")


def temporal(work: Path, args: argparse.Namespace) -> None:
    import resource

    from benchfoundry.devtools.generate_check import temporal_key_accuracy

    result = temporal_key_accuracy(work, args.clips, args.procedures, args.seed, args.keyframes)
    total = sum(t for _, t in result.by_kind.values())
    right = sum(r for r, _ in result.by_kind.values())
    print(
        f"{total} temporal questions on {args.clips} action clips and {args.procedures} "
        f"procedures: {right} keys right = {100 * right / max(1, total):.1f}%; "
        f"{result.repeated_options} with a repeated option"
    )
    for kind, (r, t) in sorted(result.by_kind.items()):
        print(f"  {kind:<16} {r}/{t} = {100 * r / max(1, t):.1f}%")
    s = result.seconds
    print(
        f"ingest {s['ingest']:.1f} s ({(args.clips + args.procedures) / s['ingest']:.1f} clips "
        f"read/s, {result.clips} distinct stored, {result.keyframes} keyframes), extract {s['extract']:.1f} s "
        f"({result.keyframes / s['extract']:.1f} keyframes/s), generate {s['generate']:.1f} s; "
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )
    for line in result.wrong[:10]:
        print("  wrong:", line)


if __name__ == "__main__":
    main()
