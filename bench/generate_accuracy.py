"""How often template questions' answer keys are right, on synthetic scenes with known truth.

    python bench/generate_accuracy.py [--scenes 120]

Renders scenes, runs ingest, extract and the template generator, then checks every question's
key against the truth (goal: at least 98%), per template kind, and prints the letter spread.
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
    parser.add_argument("--scenes", type=int, default=120)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    env.configure(work, console_level="CRITICAL")
    from benchfoundry.devtools.generate_check import template_key_accuracy

    result = template_key_accuracy(work, args.scenes)
    print(
        f"{result.questions} template questions on {args.scenes} synthetic scenes: "
        f"{result.right} keys right = {100 * result.accuracy:.1f}%"
    )
    for kind, (right, total) in sorted(result.by_kind.items()):
        print(f"  {kind:<28} {right}/{total}")
    print("answer letters: " + ", ".join(f"{k} {v}" for k, v in sorted(result.letters.items())))
    for line in result.wrong[:10]:
        print("  wrong:", line)


if __name__ == "__main__":
    main()
