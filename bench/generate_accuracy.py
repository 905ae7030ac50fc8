"""How often template questions' answer keys are right, on synthetic scenes with known truth.

    python bench/generate_accuracy.py [--scenes 120] [--contact 40] [--seed 7]

Renders scenes (object and text scenes, and contact scenes of shapes that touch, overlap or
contain one another), runs ingest, extract and the template generator, then checks every
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
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    env.configure(work, console_level="CRITICAL")
    from benchfoundry.devtools.generate_check import template_key_accuracy

    result = template_key_accuracy(work, args.scenes, args.seed, args.contact)
    print(
        f"{result.questions} template questions on {args.scenes + args.contact} synthetic scenes "
        f"({args.contact} contact scenes): {result.right} keys right = {100 * result.accuracy:.1f}%"
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
