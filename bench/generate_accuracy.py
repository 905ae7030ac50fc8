"""How often template questions' answer keys are right, on synthetic scenes with known truth.

    python bench/generate_accuracy.py [--scenes 120] [--contact 40] [--flat 40] [--seed 7]
                                      [--clips 0 --procedures 0 --keyframes 4]

Renders scenes (object and text scenes, contact scenes of shapes that touch, overlap or
contain one another, and flat scenes: one or two large pure-colour shapes on white, hard-edged
or anti-aliased, the first images a newcomer draws), runs ingest, extract and the template generator, then checks every
question's key against the truth (goal: at least 98% for every template kind), per template
kind, and prints the letter spread and, per dimension, candidates and why images got none.

With `--clips`/`--procedures` it renders video clips of known actions instead (SSv2-style single
actions and multi-step procedures), builds ingest, extract and generate from them, checks each
temporal key against the annotation files, and prints clips ingested and keyframes extracted per
second and the process's peak memory.
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
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    env.configure(work, console_level="CRITICAL")
    if args.clips or args.procedures:
        temporal(work, args)
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
