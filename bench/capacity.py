"""A capacity model from a finished build: what a daily volume of images needs in cores and model
endpoints, every figure read from the build's own records.

    python bench/capacity.py [RUN] [--images-per-day 1000000] [--endpoint-rps R]

RUN (default `datasets/runs/demo`, which `make demo` writes) is a run folder that went through
extract, generate, filter and consensus (evaluate too, for its figures). From its manifest and
usage report it prints images per core-minute per extractor (backend seconds are the time a
backend held one worker thread, so one core), candidates per image, model calls per candidate
per stage and model (the blind baselines need no endpoint; a model that ranks options by
likelihood answers every rotation in one call, one that writes letters takes a call per
rotation asked: `bench/evaluate_cost.py` measures that), and prompt tokens per call (the
stage's own prompt template rendered for every candidate and counted with the packaged SmolLM2
tokenizer; image tokens depend on the vision model and are left out). Then, for
`--images-per-day`, the extraction cores, the calls per second each model role must serve and
the prompt tokens per day; with `--endpoint-rps` (calls per second one endpoint sustains, as
`bench/gateway_throughput.py --url` measures it against that endpoint), the endpoints.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LOCAL = ("blind/",)  # models that run in the worker itself: no endpoint


def _prompt_tokens(run: Path) -> tuple[float, float, int]:
    """Mean prompt tokens of the multiple-choice prompt (as the filter and consensus steps send
    it) over every candidate, the largest, and how many were counted."""
    from transformers import AutoTokenizer

    from benchfoundry.core.letters import LETTERS
    from benchfoundry.core.records import CandidateRecord
    from benchfoundry.gateway.local_smollm2 import smollm2_folder
    from benchfoundry.prompts import load
    from benchfoundry.storage.tables import RunFolder

    tokenizer = AutoTokenizer.from_pretrained(smollm2_folder())
    template = load("mcq")
    counts = []
    for c in RunFolder(run).table(CandidateRecord).records():
        text = template.render(
            hint=c.hint, question=c.question, options=list(zip(LETTERS, c.options, strict=False))
        )
        counts.append(len(tokenizer(text)["input_ids"]))
    return statistics.fmean(counts), max(counts), len(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", type=Path, default=REPO / "datasets/runs/demo")
    parser.add_argument("--images-per-day", type=float, default=1_000_000)
    parser.add_argument("--endpoint-rps", type=float, default=None)
    args = parser.parse_args()
    run: Path = args.run
    if not (run / "manifest.json").is_file():
        sys.exit(f"{run}: not a run folder (no manifest.json); run `make demo` or name one")
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    usage = json.loads((run / "usage.json").read_text(encoding="utf-8"))
    for stage in ("extract", "generate", "filter", "consensus"):
        if "summary" not in manifest.get(stage, {}):
            sys.exit(f"{run}: the build has no {stage} summary; this needs a build through {stage}")

    from benchfoundry.core.records import CandidateRecord, ImageRecord
    from benchfoundry.storage.tables import RunFolder

    folder = RunFolder(run)
    images = folder.table(ImageRecord).count()
    candidates = folder.table(CandidateRecord).count()
    extract = manifest["extract"]["summary"]
    done = extract["images_extracted"]
    per_day = args.images_per_day
    print(f"run {run}: {images} images, {candidates} candidates")
    print(f"\nextraction ({done} images extracted in that run):")
    total_s = 0.0
    for backend, seconds in sorted(extract["seconds_by_backend"].items()):
        total_s += seconds
        rate = done / (seconds / 60) if seconds else math.inf
        print(f"  {backend:<10} {seconds:8.1f} core-s  {rate:10,.0f} images per core-minute")
    combined = done / (total_s / 60)
    cores = per_day / (1440 * combined)
    print(f"  all        {total_s:8.1f} core-s  {combined:10,.0f} images per core-minute")
    generate = manifest["generate"]["summary"]
    per_image = generate["candidates"] / generate["images"]  # generated from raw images, no seeds
    questions = per_day * per_image
    print(
        f"\ngeneration: {per_image:.2f} candidates per image ({generate['candidates']} from "
        f"{generate['images']} images; {candidates} candidates in all with seed questions)"
    )

    mean_tokens, most_tokens, counted = _prompt_tokens(run)
    print(
        f"prompt tokens per multiple-choice call (text, SmolLM2 tokenizer, {counted} prompts): "
        f"mean {mean_tokens:.0f}, largest {most_tokens}"
    )
    print("\nmodel calls per candidate (made, not from the cache):")
    roles: dict[str, float] = {}
    for stage in ("filter", "consensus"):
        asked = manifest[stage]["summary"]["candidates"]
        for model, u in sorted(usage.get(stage, {}).items()):
            per = u["calls"] / asked
            local = model.startswith(LOCAL)
            print(
                f"  {stage:<10} {model:<18} {per:6.2f}{'  (local: no endpoint)' if local else ''}"
            )
            if not local:
                roles[f"{stage} {model}"] = per
    if "evaluate" in usage and "publish" in manifest:
        released = manifest["publish"]["summary"].get("rows")
        if released:
            print(f"  evaluate (per released question, {released} released):")
            for model, u in sorted(usage["evaluate"].items()):
                print(f"    {model:<18} {u['calls'] / released:6.2f}")

    print(f"\nfor {per_day:,.0f} images a day:")
    print(
        f"  extraction: {cores:,.1f} cores busy all day ({math.ceil(cores * 1.25)} with 25% headroom)"
    )
    print(f"  candidates: {questions:,.0f} a day, {questions / 86400:,.1f} a second")
    for role, per in roles.items():
        rate = questions * per / 86400
        tokens = questions * per * mean_tokens
        line = f"  {role:<28} {rate:9,.1f} calls/s, {tokens / 1e9:6.2f} G prompt tokens a day"
        if args.endpoint_rps:
            line += f", {math.ceil(rate / args.endpoint_rps)} endpoints at {args.endpoint_rps:g} calls/s"
        print(line)


if __name__ == "__main__":
    main()
