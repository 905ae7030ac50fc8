"""How much of an evaluation the build already asked: the demo's evaluation against its build.

For every likelihood setting the evaluation runs on the release (each fact reader with the
image, each model without), the questions whose cache key (`gateway/cache.py`: the model as it
runs, the text it is shown, the options in their order) equals a question the build's
consensus (the readers, with the image, on the candidates) or filter (SmolLM2 without the
image) asked: those are answered from the response cache, not asked again. Computes the keys
only (no model runs); then prints what the run's usage journal counted for the evaluation
(calls, replayed). Needs a built demo (`make demo`).

    python bench/evaluate_reuse.py [--run datasets/runs/demo] [--release datasets/releases/demo]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", default="datasets/runs/demo")
    parser.add_argument("--release", default="datasets/releases/demo")
    args = parser.parse_args()

    from benchfoundry.answering.engine import item_messages
    from benchfoundry.core.records import CandidateRecord
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.gateway.cache import cache_key
    from benchfoundry.prompts import load_for
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset
    from benchfoundry.tasks.qc.items import mcq_item

    gateway = gateway_for_run(args.run, stage="bench")
    gateway.cache = None

    def key(model: str, item, with_image: bool) -> str:
        template = load_for("likelihood", item.language)
        prompt = template.render(hint=item.hint, question=item.question)
        messages = item_messages(item, prompt, with_image)
        _, _, material = gateway._prepare_call(
            gateway.spec(model), messages, {"score_options": list(item.options)}
        )
        return cache_key(material)

    run = RunFolder(args.run)
    candidates = [mcq_item(c) for c in run.table(CandidateRecord).records()]
    readers = [m for m in gateway.catalogue if m.startswith("facts-smollm2-")]
    build: dict[str, str] = {}  # key -> the step that asked it
    for model in readers:
        for item in candidates:
            build.setdefault(key(model, item, True), "consensus")
    for item in candidates:
        build.setdefault(key("smollm2", item, False), "filter")
    dataset = load_eval_dataset(args.release)
    print(f"{len(candidates)} candidates asked by the build; release: {len(dataset.questions)}")
    print(f"{'setting':<40} {'questions':>9} {'consensus':>9} {'filter':>7} {'new':>5}")
    # in the order the evaluation runs them (`tasks/evaluate/stage.py:plan`)
    settings = [(m, True) for m in ["facts-smollm2", *readers]]
    settings += [(m, False) for m in ["facts-smollm2", *readers, "smollm2"]]
    seen: set[str] = set()  # asked by an earlier setting of this evaluation
    total = Counter()
    for model, with_image in settings:
        found = Counter()
        for q in dataset.questions:
            k = key(model, q.item, with_image)
            found[build.get(k) or ("this evaluation" if k in seen else "new")] += 1
            seen.add(k)
        total.update(found)
        name = model + ("" if with_image else " (no image)")
        print(
            f"{name:<40} {len(dataset.questions):>9} {found['consensus']:>9} {found['filter']:>7} "
            f"{found['new']:>5}" + (f" (+{found['this evaluation']} asked by an earlier setting)"
                                    if found["this evaluation"] else "")
        )  # fmt: skip
    asked = sum(total.values())
    print(
        f"in all: {asked} questions, {total['consensus']} asked by consensus, {total['filter']} "
        f"by the filter, {total['this evaluation']} by an earlier setting, {total['new']} new "
        f"({1 - total['new'] / asked:.0%} not asked again)"
    )
    usage = Path(args.run) / "usage.json"
    if usage.exists():
        stage = json.loads(usage.read_text()).get("evaluate", {})
        calls = sum(u["calls"] for u in stage.values())
        cached = sum(u["cached"] for u in stage.values())
        print(f"the run's usage journal, evaluate: {calls} calls, {cached} replayed from the cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
