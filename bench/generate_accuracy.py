"""How often template questions' answer keys are right, on synthetic scenes with known truth.

    python bench/generate_accuracy.py [--scenes 120] [--contact 40] [--flat 40] [--seed 7]

Renders scenes (object and text scenes, contact scenes of shapes that touch, overlap or
contain one another, and flat scenes: one or two large pure-colour shapes on white, hard-edged
or anti-aliased, the first images a newcomer draws), runs ingest, extract and the template generator, then checks every
question's key against the truth (goal: at least 98% for every template kind), per template
kind, and prints the letter spread and, per dimension, candidates and why images got none.
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
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    env.configure(work, console_level="CRITICAL")
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


if __name__ == "__main__":
    main()
