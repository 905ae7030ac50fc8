"""What quality control costs on the embedded defaults: model calls made against asking every
pass of every model, and wall time per 1,000 candidates, cold and from the cache.

    python bench/qc_cost.py [--scenes 40]

Renders synthetic scenes, runs ingest, extract and the template generator, then the filter,
consensus and select steps with the embedded models (SmolLM2 without the image, SmolLM2 reading
the facts, the blind baselines), twice: the second run answers from the response cache.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-qc-"))
    env.configure(work, console_level="CRITICAL")
    from benchfoundry.devtools.synthetic import write_corpus
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.sources.models import FolderSource
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.extract.options import ExtractOptions
    from benchfoundry.tasks.extract.stage import run as extract_stage
    from benchfoundry.tasks.generate.options import GenerateOptions
    from benchfoundry.tasks.generate.stage import generate_all
    from benchfoundry.tasks.ingest.options import IngestOptions
    from benchfoundry.tasks.ingest.stage import run as ingest_stage
    from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions, SelectOptions
    from benchfoundry.tasks.qc.stage import consensus_all, filter_all, select_all

    n_text = args.scenes // 4
    write_corpus(work / "corpus", n_objects=args.scenes - n_text, n_text=n_text, seed=11)
    run = RunFolder(work / "run")
    ingest_stage(
        StageRun.make(
            run, sources=[FolderSource(path=work / "corpus" / "images")], ingest=IngestOptions()
        )
    )
    extract_stage(StageRun.make(run, extract=ExtractOptions()))
    generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    models: dict[str, list[str]] = {}
    for attempt in ("cold", "cached"):
        gateway = gateway_for_run(run.root, stage="qc")
        started = time.perf_counter()
        text = filter_all(run, gateway, FilterOptions(), models)
        vlm = consensus_all(run, gateway, ConsensusOptions(), models)
        chosen = select_all(run, FilterOptions(), ConsensusOptions(), SelectOptions(), models)
        seconds = time.perf_counter() - started
        n = text.candidates
        print(
            f"{attempt}: {n} candidates from {args.scenes} scenes, {seconds:.1f} s "
            f"= {1000 * seconds / max(1, n):.0f} s per 1,000 candidates"
        )
        for step in (text, vlm):
            print(
                f"  {step.step}: {step.calls_made} calls made of {step.calls_if_every_pass} "
                f"if every pass of every model were asked "
                f"({100 * step.calls_made / max(1, step.calls_if_every_pass):.0f}%), "
                f"{step.calls_cached} from the cache, {step.seconds:.1f} s"
            )
            for m in step.models:
                print(
                    f"    {m.model:<16} {m.calls_made:>5} / {m.calls_if_every_pass:<5} calls, "
                    f"right {100 * m.vanilla_accuracy:.1f}% first pass"
                )
        print("  decisions: " + ", ".join(f"{k} {v}" for k, v in chosen.decisions.items()))
    scripted(run)


def scripted(run) -> None:  # type: ignore[no-untyped-def]
    """Models that write letters, over real HTTP: what CircularEval's early stop saves."""
    import random
    import re

    from benchfoundry.core.records import CandidateRecord
    from benchfoundry.devtools.testserver import Rule, Script, TestServer
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.tasks.qc.options import FilterOptions
    from benchfoundry.tasks.qc.stage import filter_all

    key = {
        (c.question, frozenset(c.options)): c.options["ABCDEFGHIJ".index(c.answer)]
        for c in run.table(CandidateRecord).records()
    }

    def knows(request):  # type: ignore[no-untyped-def]
        question = re.search(r"Question: (.*)", request.text).group(1)
        shown = dict(re.findall(r"^([A-J])\. (.*)$", request.text, re.M))
        right = key.get((question, frozenset(shown.values())))
        return next((L for L, text in shown.items() if text == right), "A")

    def coin(request):  # type: ignore[no-untyped-def]
        return random.Random(request.text).choice("ABCD")

    script = Script(rules=[Rule(knows, model="oracle"), Rule("A", model="always-a"),
                           Rule(coin, model="coin")])  # fmt: skip
    with TestServer(script) as server:
        models = {
            "text_only": [f"openai/{m}@{server.base_url}" for m in ("oracle", "always-a", "coin")]
        }
        gateway = gateway_for_run(run.root, stage="bench")
        started = time.perf_counter()
        step = filter_all(run, gateway, FilterOptions(blind=[], chance=[]), models)
        seconds = time.perf_counter() - started
    print(
        f"letter-writing models over HTTP (test server): {step.candidates} candidates, "
        f"{seconds:.1f} s = {1000 * seconds / max(1, step.candidates):.0f} s per 1,000 candidates"
    )
    for m in step.models:
        name = m.model.split("/")[1].split("@")[0]
        print(
            f"  {name:<9} {m.calls_made:>5} calls of {m.calls_if_every_pass} for every pass "
            f"({100 * m.calls_made / max(1, m.calls_if_every_pass):.0f}%), right "
            f"{100 * m.vanilla_accuracy:.1f}% first pass, {100 * (m.circular_accuracy or 0):.1f}% circular"
        )


if __name__ == "__main__":
    main()
