"""Choice extraction and `score` speed on prediction files shaped like real benchmarks: 20,000
rows whose responses are of the kinds models write (bare letters, "The answer is C.", "B. text",
the option's text, long reasoning with a labelled letter, refusals...), with 8, 86 or 20,000
distinct option sets (every row its own options, as in a real benchmark).

    python bench/score_speed.py [--rows 20000] [--sets 8,86,20000]

Prints rows per CPU-second of `extract_choice` (best of five passes, taken in turn with
`can_infer`'s), and of the whole of `score_predictions` (best of three: reading the options of
every row, extracting, scoring). Each of our passes starts from cold (`clear_caches`), as a new
`score` process does, so that what one pass remembers does not speed up the next. Where
VLMEvalKit's `can_infer` is found, also its speed on the same rows, side by side, our time as a
share of its time, and how often the two disagree where both decide. It is found in an
importable `vlmeval`, or in the `vlmeval/utils/matching_util.py` of a folder named in
BENCHFOUNDRY_VLMEVALKIT (a VLMEvalKit checkout or an unpacked `vlmeval` wheel, whose package
needs VLMEvalKit's many dependencies to import: that one file needs none but a logger).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import random
import sys
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
for extra in filter(None, os.environ.get("BENCHFOUNDRY_VLMEVALKIT", "").split(":")):
    sys.path.append(extra)

WORDS = [
    "cat",
    "dog",
    "bird",
    "fish",
    "horse",
    "red",
    "green",
    "blue",
    "yellow",
    "black",
    "white",
    "table",
    "chair",
    "lamp",
    "window",
    "door",
    "car",
    "bus",
    "train",
    "boat",
    "plane",
    "tree",
    "flower",
    "river",
    "mountain",
    "road",
    "bridge",
    "sign",
    "clock",
    "phone",
    "book",
    "cup",
]


def option_sets(n: int, rng: random.Random) -> list[list[str]]:
    sets = []
    for i in range(n):
        k = rng.choice((2, 3, 4, 4, 4))
        words = rng.sample(WORDS, k)
        sets.append([f"{w} {i}" if n > 86 else w for w in words])
    return sets


def response(options: list[str], answer: str, rng: random.Random) -> str:
    text = options["ABCD".index(answer)]
    kind = rng.random()
    if kind < 0.30:
        return answer
    if kind < 0.50:
        return f"The answer is {answer}."
    if kind < 0.65:
        return f"{answer}. {text}"
    if kind < 0.78:
        return f"It is the {text}."
    if kind < 0.88:
        return (
            "Looking at the image carefully, the object in question matches the description "
            f"best, so I would pick ({answer}) from the list."
        )
    if kind < 0.93:
        return "I cannot determine the answer from the image."
    return answer.lower()


def frame(rows: int, sets: int, seed: int = 0):
    import pandas as pd

    rng = random.Random(seed)
    pool = option_sets(sets, rng)
    records = []
    for i in range(rows):
        options = pool[i % sets]
        answer = rng.choice("ABCD"[: len(options)])
        record = {"index": i, "question": f"Question {i}?", "answer": answer}
        for j, letter in enumerate("ABCD"):
            record[letter] = options[j] if j < len(options) else ""
        record["prediction"] = response(options, answer, rng)
        records.append(record)
    return pd.DataFrame(records)


def vlmevalkit_versus_score(data, folder: Path) -> tuple[float, float]:
    """Seconds for VLMEvalKit's own scoring of a prediction file (`ImageMCQDataset.evaluate`
    with exact matching, the dataset's TSV in `$LMUData`) and for ours (`score`'s reading and
    scoring) on the same file."""
    import base64
    import io

    from PIL import Image

    from benchfoundry.answering.predictions import read_predictions, score_predictions

    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), "white").save(buffer, format="PNG")
    image = base64.b64encode(buffer.getvalue()).decode()
    folder.mkdir(parents=True, exist_ok=True)
    meta = data.drop(columns=["prediction"]).copy()
    meta["image"] = [image] + ["0"] * (len(meta) - 1)  # VLMEvalKit's shared-image rule
    meta.to_csv(folder / "benchspeed.tsv", sep="\t", index=False)
    predictions = folder / "model_benchspeed.xlsx"
    data.to_excel(predictions, index=False)
    os.environ["LMUData"] = str(folder)  # noqa: SIM112  (VLMEvalKit reads this name)
    from vlmeval.dataset.image_mcq import CustomMCQDataset

    dataset = CustomMCQDataset(dataset="benchspeed")
    start = time.perf_counter()
    try:
        dataset.evaluate(str(predictions), model="exact_matching", nproc=1)
    except FileNotFoundError as exc:  # its last step reads back an .xlsx it may not have written
        print(f"       (VLMEvalKit's evaluate ended with: {exc})", flush=True)
    theirs = time.perf_counter() - start
    start = time.perf_counter()
    score_predictions(read_predictions(predictions))
    return theirs, time.perf_counter() - start


def load_can_infer():
    """VLMEvalKit's `can_infer` and where it came from, or (None, None)."""
    try:
        from vlmeval.utils.matching_util import can_infer

        return can_infer, "vlmeval"
    except ImportError:
        pass
    for folder in filter(None, os.environ.get("BENCHFOUNDRY_VLMEVALKIT", "").split(":")):
        path = Path(folder) / "vlmeval" / "utils" / "matching_util.py"
        if path.is_file():
            # Its package imports all of VLMEvalKit; this file needs only `get_logger` from `smp`.
            for name in ("vlmeval", "vlmeval.utils", "vlmeval.smp", "vlmeval.smp.log"):
                module = types.ModuleType(name)
                module.__path__ = []
                module.get_logger = logging.getLogger
                sys.modules[name] = module
            spec = importlib.util.spec_from_file_location("vlmeval.utils.matching_util", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            return module.can_infer, str(path)
    return None, None


def rows_per_second(fns, items, resets, repeat: int = 5) -> list[float]:
    """Rows per CPU-second of each of `fns` over `items`: the best of `repeat` timed passes (as
    `timeit` reports: the least disturbed by the rest of the machine), the functions' passes
    taken in turn so that a slower spell of the machine falls on all of them alike; `resets`
    (one per function, or None) runs, untimed, before each of its passes."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, (fn, args, reset) in enumerate(zip(fns, items, resets, strict=True)):
            if reset is not None:
                reset()
            start = time.process_time()
            for item in args:
                fn(*item)
            best[k] = min(best[k], time.process_time() - start)
    return [len(items[0]) / max(1e-9, b) for b in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--sets", default="8,86,20000")
    parser.add_argument(
        "--whole", action="store_true", help="also time VLMEvalKit's evaluate on the whole file"
    )
    args = parser.parse_args()

    from benchfoundry.answering.choice import clear_caches, extract_choice
    from benchfoundry.answering.predictions import score_predictions

    can_infer, origin = load_can_infer()
    if can_infer is not None:
        print(f"VLMEvalKit's can_infer from {origin}", flush=True)
    for sets in (int(s) for s in args.sets.split(",")):
        data = frame(args.rows, sets)
        items = [(r["prediction"], [r[x] for x in "ABCD" if r[x]]) for r in data.to_dict("records")]
        choices = [(p, dict(zip("ABCD", o, strict=False))) for p, o in items]
        if can_infer is not None:
            ours, theirs = rows_per_second(
                (extract_choice, can_infer), (items, choices), (clear_caches, None)
            )
        else:
            (ours,) = rows_per_second((extract_choice,), (items,), (clear_caches,))
        (whole,) = rows_per_second((score_predictions,), ([(data,)],), (clear_caches,), 3)
        whole *= args.rows
        line = (
            f"{sets:>6} option sets: extract_choice {ours:>9,.0f} rows/s, "
            f"score_predictions {whole:>9,.0f} rows/s"
        )
        if can_infer is not None:
            disagree = 0
            for (p, o), (_, c) in zip(items, choices, strict=True):
                a, b = extract_choice(p, o).letter, can_infer(p, c)
                if a is not None and b and a != b:
                    disagree += 1
            line += (
                f"; VLMEvalKit can_infer {theirs:>9,.0f} rows/s, disagreements {disagree}; "
                f"time against can_infer's: extract_choice {theirs / ours:.2f}, "
                f"score_predictions {theirs / whole:.2f}"
            )
        print(line, flush=True)
        if can_infer is not None and args.whole:
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                theirs_s, ours_s = vlmevalkit_versus_score(data, Path(tmp))
            print(
                f"{'':>6} whole file (.xlsx): VLMEvalKit evaluate {theirs_s:.1f} s, "
                f"benchfoundry score {ours_s:.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
