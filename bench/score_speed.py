"""Choice extraction and `score` speed on prediction files shaped like real benchmarks: 20,000
rows whose responses are of the kinds models write (bare letters, "The answer is C.", "B. text",
the option's text, long reasoning with a labelled letter, refusals...), with 8, 86 or 20,000
distinct option sets (every row its own options, as in a real benchmark).

    python bench/score_speed.py [--rows 20000] [--sets 8,86,20000] [--cold 3] [--warm 7]

Prints, side by side for the same rows, the CPU seconds of VLMEvalKit's `can_infer` (one call per
row), of our extraction row by row (`extract_choice`) and as `score` does it for a whole file
(`extract_many`), and of the whole of `score_predictions` (reading the frame's columns,
extracting, building and summarising the rows), each as a share of `can_infer`'s time:
- cold: the median of `--cold` fresh processes that each time one pass of one of them after
  building the rows (as a new `score` process does: nothing remembered, nothing warmed);
- warm: the median of `--warm` passes in one process after an untimed first one, taken in
  turn, our remembered readings cleared before each of our passes so that no pass reuses
  another's results.
The share is given twice: the ratio of the two medians, and the median of the ratios round by
round (each round runs every kind once, side by side, so a slow spell of a shared machine
falls on both sides of its ratio).
Then, for every row its own option set, the same per response shape (µs a row, warm), and how
often `can_infer` and we disagree where both decide. `can_infer` is found in an importable
`vlmeval`, or in the `vlmeval/utils/matching_util.py` of a folder named in
BENCHFOUNDRY_VLMEVALKIT (a VLMEvalKit checkout or an unpacked `vlmeval` wheel, whose package
needs VLMEvalKit's many dependencies to import: that one file needs none but a logger); without
it the bench says so and times ours alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import random
import statistics
import subprocess
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


# Response shapes: name, share of the rows, and the response for an answer and its text.
SHAPES = [
    ("bare letter", 0.30, lambda answer, text: answer),
    ("answer marker", 0.20, lambda answer, text: f"The answer is {answer}."),
    ("letter and text", 0.15, lambda answer, text: f"{answer}. {text}"),
    ("option text", 0.13, lambda answer, text: f"It is the {text}."),
    (
        "long reasoning",
        0.10,
        lambda answer, text: (
            f"Looking at the image carefully, the {text} in question matches the description "
            f"best, so I would pick ({answer}) from the list."
        ),
    ),
    ("refusal", 0.05, lambda answer, text: "I cannot determine the answer from the image."),
    ("lower-case letter", 0.07, lambda answer, text: answer.lower()),
]


def response(options: list[str], answer: str, rng: random.Random, shape: str | None = None) -> str:
    text = options["ABCD".index(answer)]
    draw = rng.random()
    for name, share, make in SHAPES:
        if name == shape or (shape is None and draw < share):
            return make(answer, text)
        draw -= share
    return SHAPES[-1][2](answer, text)


def frame(rows: int, sets: int, seed: int = 0, shape: str | None = None):
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
        record["prediction"] = response(options, answer, rng, shape)
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


KINDS = ("can_infer", "extract_choice", "extract_many", "score")


def passes(data, can_infer):
    """Each kind's pass over `data` (a function of no argument) and what runs, untimed, before
    it (our remembered readings cleared)."""
    from benchfoundry.answering.choice import clear_caches, extract_choice
    from benchfoundry.answering.choice_batch import extract_many
    from benchfoundry.answering.predictions import score_predictions

    items = [(r["prediction"], [r[x] for x in "ABCD" if r[x]]) for r in data.to_dict("records")]
    choices = [(p, dict(zip("ABCD", o, strict=False))) for p, o in items]
    responses = [p for p, _ in items]
    counts = [len(o) for _, o in items]

    def theirs():
        for p, c in choices:
            can_infer(p, c)

    def row_by_row():
        for p, o in items:
            extract_choice(p, o)

    def many():
        extract_many(responses, counts, lambda rows: [items[r][1] for r in rows])

    def whole():
        score_predictions(data)

    runs = {"can_infer": theirs, "extract_choice": row_by_row, "extract_many": many}
    runs["score"] = whole
    if can_infer is None:
        del runs["can_infer"]
    return runs, clear_caches, items, choices


def timed(run, reset=None) -> float:
    if reset is not None:
        reset()
    start = time.process_time()
    run()
    return time.process_time() - start


def warm(data, can_infer, repeat: int) -> dict[str, list[float]]:
    """The CPU seconds of each kind's passes in this process, round by round, after an untimed
    first pass of each, the kinds taken in turn so that a slower spell of a shared machine falls
    on all."""
    runs, reset, _, _ = passes(data, can_infer)
    seconds = {kind: [] for kind in runs}
    for round_ in range(repeat + 1):
        for kind, run in runs.items():
            spent = timed(run, None if kind == "can_infer" else reset)
            if round_:
                seconds[kind].append(spent)
    return seconds


def cold(args, sets: int, kinds, repeat: int) -> dict[str, list[float]]:
    """The CPU seconds of one pass of each kind, each in a fresh process, round by round (the
    kinds in turn in each round)."""
    seconds = {kind: [] for kind in kinds}
    for _ in range(repeat):
        for kind in kinds:
            command = [sys.executable, __file__, "--rows", str(args.rows), "--sets", str(sets)]
            done = subprocess.run(
                [*command, "--one", kind], capture_output=True, text=True, check=True
            )
            seconds[kind].append(float(done.stdout.strip().splitlines()[-1]))
    return seconds


def one(args) -> None:
    """(In a fresh process.) Build the rows, then time one pass of `--one`; print its seconds."""
    data = frame(args.rows, int(args.sets))
    can_infer, _ = load_can_infer()
    runs, _, _, _ = passes(data, can_infer)
    print(timed(runs[args.one]))


def line(label: str, samples: dict[str, list[float]], rows: int) -> str:
    """Each kind's median, its share of `can_infer`'s median, and the median of its share round
    by round (each round's passes ran side by side, in the same spell of the machine)."""
    base = samples.get("can_infer")
    parts = []
    for kind, values in samples.items():
        share = ""
        if base and kind != "can_infer":
            paired = statistics.median(v / b for v, b in zip(values, base, strict=True))
            share = f" ({statistics.median(values) / statistics.median(base):.2f}x, by round {paired:.2f}x)"
        parts.append(f"{kind} {statistics.median(values) * 1e3:7.1f} ms{share}")
    return f"  {label:5s} " + ", ".join(parts) + f"  [{rows:,} rows]"


def shapes(args, can_infer) -> None:
    """Per response shape, every row its own option set: µs a row, warm."""
    print("  per shape, every row its own options (µs a row, warm; share of can_infer's):")
    for name, _, _ in SHAPES:
        data = frame(args.rows, args.rows, shape=name)
        figures = {
            k: statistics.median(v)
            for k, v in warm(data, can_infer, max(3, args.warm // 2)).items()
        }
        base = figures.get("can_infer")
        cells = []
        for kind, seconds in figures.items():
            share = f" ({seconds / base:.2f}x)" if base and kind != "can_infer" else ""
            cells.append(f"{kind} {seconds / args.rows * 1e6:5.2f}{share}")
        print(f"    {name:18s} " + ", ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--sets", default="8,86,20000")
    parser.add_argument("--cold", type=int, default=3, help="fresh processes per kind (0: none)")
    parser.add_argument("--warm", type=int, default=7, help="timed passes per kind in-process")
    parser.add_argument("--no-shapes", action="store_true", help="skip the per-shape figures")
    parser.add_argument("--one", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--whole", action="store_true", help="also time VLMEvalKit's evaluate on the whole file"
    )
    args = parser.parse_args()
    if args.one:
        return one(args)

    can_infer, origin = load_can_infer()
    if can_infer is not None:
        print(f"VLMEvalKit's can_infer from {origin}", flush=True)
    else:
        print(
            "VLMEvalKit's can_infer NOT FOUND: no `vlmeval` to import and no "
            "vlmeval/utils/matching_util.py under BENCHFOUNDRY_VLMEVALKIT "
            f"({os.environ.get('BENCHFOUNDRY_VLMEVALKIT') or 'unset'}); timing ours alone, "
            "with no ratio to the requirement",
            flush=True,
        )
    print(
        f"CPU seconds for {args.rows:,} rows; cold: median of {args.cold} fresh processes, "
        f"warm: median of {args.warm} passes in one process",
        flush=True,
    )
    for sets in (int(s) for s in args.sets.split(",")):
        data = frame(args.rows, sets)
        print(f"{sets:>6} option sets", flush=True)
        kinds = [k for k in KINDS if can_infer is not None or k != "can_infer"]
        if args.cold:
            print(line("cold", cold(args, sets, kinds, args.cold), args.rows), flush=True)
        print(line("warm", warm(data, can_infer, args.warm), args.rows), flush=True)
        if can_infer is not None:
            from benchfoundry.answering.choice import extract_choice

            _, _, items, choices = passes(data, can_infer)
            disagree = 0
            for (p, o), (_, c) in zip(items, choices, strict=True):
                a, b = extract_choice(p, o).letter, can_infer(p, c)
                if a is not None and b and a != b:
                    disagree += 1
            print(f"  disagreements with can_infer where both decide: {disagree}", flush=True)
        if can_infer is not None and args.whole:
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                theirs_s, ours_s = vlmevalkit_versus_score(data, Path(tmp))
            print(
                f"  whole file (.xlsx): VLMEvalKit evaluate {theirs_s:.1f} s, "
                f"benchfoundry score {ours_s:.1f} s",
                flush=True,
            )
    if not args.no_shapes:
        shapes(args, can_infer)


if __name__ == "__main__":
    main()
