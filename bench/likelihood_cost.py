"""What a fact reader's likelihood question costs on this CPU: tokens per question and seconds.

Asks the demo release's questions (with the image, every language) of each fact reader with no
response cache, as the evaluation sends them (an image's questions together, 64 a call), and
prints per reader and language:
- prompt tokens per question: the prompt and each option's tokens but its last, as a question
  asked alone runs them;
- run per question: what packed scoring ran (`gateway/local_packing.py`): nodes of the token
  trees below the opening every question of a call shares, plus that opening (run once per
  process and kept) and the padding of the passes;
- seconds in all and per question, with the load average (the machine is shared: say so).

`--json FILE` keeps the figures and every chosen letter; `--compare FILE` (an earlier run's
JSON) counts the questions whose letter differs, to check that a change of layout or passes
moves no answer beyond float32 rounding. Runs in float32 unless BENCHFOUNDRY_CPU_DTYPE says
otherwise. Needs a built demo (`make demo`): its run folder (the facts) and its release.

    python bench/likelihood_cost.py --json after.json --compare before.json
    python bench/likelihood_cost.py --models facts-smollm2-objects --languages zh --row-tokens 512
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime

READERS = ["facts-smollm2", "facts-smollm2-captions", "facts-smollm2-objects", "facts-smollm2-text"]
CALL = 64  # questions per call, as the answering engine sends them (`score_batch`)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", default="datasets/runs/demo", help="the demo's run folder")
    parser.add_argument("--release", default="datasets/releases/demo", help="its release")
    parser.add_argument("--models", nargs="+", default=READERS)
    parser.add_argument("--languages", nargs="+", default=["en", "zh"])
    parser.add_argument("--row-tokens", type=int, help="rows of packed scoring (default: model's)")
    parser.add_argument("--pass-tokens", type=int, help="passes of packed scoring")
    parser.add_argument("--json", help="write the figures and the chosen letters here")
    parser.add_argument("--compare", help="an earlier --json: count the letters that differ")
    args = parser.parse_args()
    os.environ.setdefault("BENCHFOUNDRY_CPU_DTYPE", "float32")

    from benchfoundry.answering.engine import item_messages
    from benchfoundry.core.letters import LETTERS
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.gateway.local_packing import Layout
    from benchfoundry.gateway.local_scoring import encode_options
    from benchfoundry.gateway.messages import TextPart, clip_input, normalise
    from benchfoundry.prompts import load_for
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset

    dataset = load_eval_dataset(args.release)
    gateway = gateway_for_run(args.run, stage="bench")
    gateway.cache = None  # every question asked, none replayed
    sizes = {
        k: v
        for k, v in (("row_tokens", args.row_tokens), ("pass_tokens", args.pass_tokens))
        if v is not None
    }
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {os.environ['BENCHFOUNDRY_CPU_DTYPE']}"
        + (f", {sizes}" if sizes else "")
    )
    print(
        f"{'reader':<24} {'lang':<4} {'questions':>9} {'prompt tok/q':>12} {'run tok/q':>9} "
        f"{'opening':>7} {'padding/q':>9} {'seconds':>8} {'cpu s':>7} {'s/q':>6}  load"
    )
    figures: dict[str, dict] = {}
    for name in args.models:
        spec = gateway.spec(name)
        reader = gateway.provider(spec)
        inner = reader.inner
        inner.load()
        if sizes:  # the reader's inner model is built from its own entry: size it too
            inner.spec = inner.spec.model_copy(update={"options": {**inner.spec.options, **sizes}})
        for language in args.languages:
            questions = sorted(
                (q for q in dataset.questions if q.language == language), key=lambda q: q.image_id
            )
            if not questions:
                continue
            template = load_for("likelihood", language)
            requests = [
                (
                    item_messages(
                        q.item, template.render(hint=q.item.hint, question=q.item.question), True
                    ),
                    q.item.options,
                )
                for q in questions
            ]
            alone = 0
            tokenizer = inner._tokenizer()
            for messages, options in requests:
                parts = clip_input(
                    normalise(messages, gateway.context.images),
                    reader.sees,
                    spec.frames,
                    spec.video,
                )
                shown = [p for p in reader._as_text(parts) if isinstance(p, TextPart)]
                prompt = inner._inputs(shown, None)["input_ids"][0].tolist()
                alone += len(prompt) + sum(
                    len(ids) - 1 for ids in encode_options(tokenizer, prompt, options)
                )
            inner.layout = Layout()
            load = os.getloadavg()[0]
            started, cpu = time.perf_counter(), time.process_time()
            letters = {}
            for at in range(0, len(requests), CALL):
                answers = gateway.score_options_many(spec, requests[at : at + CALL])
                for q, scores in zip(questions[at : at + CALL], answers, strict=True):
                    letters[q.item.question_id] = LETTERS[scores.best(normalised=True)]
            seconds = time.perf_counter() - started
            cpu = time.process_time() - cpu
            n = len(questions)
            layout = inner.layout
            calls = -(-n // CALL)
            opening = layout.shared // max(1, calls)
            figures[f"{name} {language}"] = {
                "questions": n,
                "prompt_tokens_per_question": round(alone / n, 1),
                "run_tokens_per_question": round(layout.nodes / n, 1),
                "opening": opening,
                "padding_per_question": round(layout.padding / n, 1),
                "passes": layout.passes,
                "seconds": round(seconds, 2),
                "cpu_seconds": round(cpu, 2),
                "load": [round(load, 1), round(os.getloadavg()[0], 1)],
                "letters": letters,
            }
            f = figures[f"{name} {language}"]
            print(
                f"{name:<24} {language:<4} {n:>9} {f['prompt_tokens_per_question']:>12} "
                f"{f['run_tokens_per_question']:>9} {opening:>7} {f['padding_per_question']:>9} "
                f"{seconds:>8.1f} {cpu:>7.1f} {seconds / n:>6.2f}  {f['load'][0]}-{f['load'][1]}",
                flush=True,
            )
    if args.compare:
        with open(args.compare) as handle:
            earlier = json.load(handle)
        differ = same = 0
        for key, now in figures.items():
            before = earlier.get(key, {}).get("letters", {})
            for qid, letter in now["letters"].items():
                if qid in before:
                    same += before[qid] == letter
                    differ += before[qid] != letter
        print(f"letters against {args.compare}: {same} the same, {differ} differ")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
