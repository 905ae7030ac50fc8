"""What an evaluation costs: questions per minute and calls per question under CircularEval with
early stop against every pass, for a scripted model at three accuracies, on the local
OpenAI-compatible test server (no latency: the time is the evaluation's own overhead); and judge
calls per 1,000 free-form answers of the kinds models write.

    python bench/evaluate_cost.py [--questions 200] [--accuracies 0.3,0.6,0.9]

Prints the figures; writes under a temporary folder.
"""

from __future__ import annotations

import argparse
import base64
import io
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def write_dataset(path: Path, n: int) -> None:
    import pandas as pd
    from PIL import Image

    rows = []
    for i in range(n):
        buffer = io.BytesIO()
        Image.new("RGB", (48, 48), (i * 37 % 255, i * 91 % 255, i * 53 % 255)).save(buffer, "PNG")
        rows.append(
            {
                "index": i, "image": base64.b64encode(buffer.getvalue()).decode(),
                "question": f"Question {i}?", "A": f"q{i} right", "B": f"q{i} no1",
                "C": f"q{i} no2", "D": f"q{i} no3", "answer": "A", "category": "c",
            }
        )  # fmt: skip
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)


def scripted(accuracy: float):
    """Knows a question (answers its right option's text, in every rotation) with probability
    `accuracy`, decided per question; otherwise names a wrong option's text."""
    import re

    from benchfoundry.devtools.testserver import Rule, Script

    def reply(request) -> str:
        number = re.search(r"Question (\d+)\?", request.text)
        i = int(number.group(1)) if number else 0
        knows = random.Random(i).random() < accuracy
        return f"q{i} right" if knows else f"q{i} no1"

    return Script(rules=[Rule(reply)], default="A")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--accuracies", default="0.3,0.6,0.9")
    args = parser.parse_args()

    from score_speed import frame

    from benchfoundry.answering.choice import extract_choice
    from benchfoundry.devtools.testserver import TestServer
    from benchfoundry.pipeline.registry import STAGES, StageRun
    from benchfoundry.tasks.evaluate.options import EvaluateOptions

    with tempfile.TemporaryDirectory() as tmp:
        dataset = Path(tmp) / "bench.tsv"
        write_dataset(dataset, args.questions)
        for accuracy in (float(a) for a in args.accuracies.split(",")):
            with TestServer(scripted(accuracy)) as server:
                options = EvaluateOptions(dataset=dataset, models=[f"openai/m@{server.base_url}"])
                run = Path(tmp) / f"run-{accuracy}"
                start = time.perf_counter()
                summary = STAGES["evaluate"].run(StageRun.make(run, evaluate=options))
                seconds = time.perf_counter() - start
            (score,) = summary.scores
            n = score.questions
            print(
                f"accuracy {accuracy:.0%} (measured circular {score.circular.accuracy:.0%}): "
                f"{score.calls_made / n:.2f} calls per question with early stop, "
                f"{score.calls_if_every_pass / n:.2f} for every pass "
                f"({1 - score.calls_made / score.calls_if_every_pass:.0%} saved); "
                f"{n / seconds * 60:,.0f} questions/min, {seconds / score.calls_made * 1000:.1f} ms "
                "overhead per call",
                flush=True,
            )
    data = frame(20_000, 20_000)
    undecided = sum(
        not extract_choice(r["prediction"], [r[x] for x in "ABCD" if r[x]]).decided
        for r in data.to_dict("records")
    )
    print(
        f"judge calls per 1,000 free-form answers: {undecided / len(data) * 1000:.0f} "
        f"(the heuristic leaves {undecided} of {len(data):,} undecided; one call each when the "
        "judge answers with a letter)"
    )


if __name__ == "__main__":
    main()
