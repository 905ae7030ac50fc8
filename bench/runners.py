"""The same build under Prefect's thread pool and under Dask worker processes, side by side: wall
seconds of each whole build and of its stages' work, and whether their tables are identical.

    python bench/runners.py [--scenes 40] [--workers 2] [--latency 0.05]

The build goes through every stage (ingest, extract, generate, filter, consensus, select,
review, publish, evaluate); its text-only reader, vision-language looker and judge are models on
the local OpenAI-compatible test server answering after `latency` seconds (the looker knows the
answers), beside the blind baselines. Each build is `benchfoundry build SPEC --json` in its own
process with its own embedded Prefect server, as a curator runs it; the Dask build starts a
`LocalCluster` of `workers` processes.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from incremental import timed_build  # noqa: E402  (bench/, beside this script)

SPEC = """name: runners
sources: [{{kind: folder, path: {images}}}]
stages: [ingest, extract, generate, filter, consensus, select, review, publish, evaluate]
model_catalogue: {catalogue}
options:
  extract: {{ocr: none}}
  select: {{target: 100000}}
  review: {{auto: true}}
  publish: {{to: {releases}, allow_unreviewed: true, letter_tolerance: 1.0, longest_answer_share: 1.0}}
  evaluate: {{models: [looker, blind/longest], mode: circular}}
models: {{text_only: [reader, blind/longest, blind/similar], vlm: [looker], judge: [grader]}}
runner: {runner}
output: {out}
"""


def build(work: Path, name: str, runner: str, images: Path, catalogue: Path) -> tuple[dict, float]:
    out = work / name
    spec = work / f"{name}.yaml"
    spec.write_text(
        SPEC.format(
            images=images, releases=work / f"releases-{name}", out=out, runner=runner,
            catalogue=catalogue,
        ),
        encoding="utf-8",
    )  # fmt: skip
    return timed_build(spec, work / f"home-{name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()

    from benchfoundry.devtools.synthetic import write_corpus
    from benchfoundry.devtools.testserver import Oracle, Rule, Script, TestServer

    work = Path(tempfile.mkdtemp(prefix="bench-runners-"))
    write_corpus(work / "scenes", n_objects=args.scenes * 3 // 4, n_text=args.scenes // 4, seed=3)
    oracle = Oracle(work / "threads")

    def looker(request) -> str:
        if re.search(r"how many", request.text, re.I):
            return "Hard to say which."
        return oracle.answer(request.text)

    script = Script(
        rules=[Rule("A", model="reader"), Rule(looker, model="looker"), Rule("C", model="grader")],
        default="A",
    )
    with TestServer(script, latency_s=args.latency) as server:
        catalogue = work / "models.yaml"
        catalogue.write_text(
            "models:\n"
            + "".join(
                f"  - {{name: {n}, provider: openai, model: {n}, base_url: '{server.base_url}',"
                f" roles: [{r}], concurrency: 8}}\n"
                for n, r in (("reader", "text_only"), ("looker", "vlm"), ("grader", "judge"))
            ),
            encoding="utf-8",
        )
        images = work / "scenes" / "images"
        results = {}
        for name, runner in (
            ("threads", "{kind: thread}"),
            ("dask", f"{{kind: dask, workers: {args.workers}}}"),
        ):
            summary, seconds = build(work, name, runner, images, catalogue)
            results[name] = (summary, seconds)
            extract = summary["summaries"]["extract"]
            print(
                f"{name:<8} {seconds:7.1f} s whole build; extract {extract['seconds_total']:.1f} s "
                f"wall for {extract['images_extracted']} images in {extract['processes']} "
                f"process(es); release {summary['summaries']['publish']['version']}",
                flush=True,
            )
        calls = server.stats.requests
    from benchfoundry.devtools.compare import run_tables

    a, b = (
        run_tables(work / "threads", [work / "threads"]),
        run_tables(work / "dask", [work / "dask"]),
    )
    same = [t for t in a if a[t] == b.get(t)]
    differ = sorted(set(a) ^ set(b) | {t for t in a if a[t] != b.get(t)})
    print(f"{calls} model requests over both builds (latency {args.latency * 1000:.0f} ms)")
    print(f"tables identical: {len(same)} of {len(a)}" + (f"; differ: {differ}" if differ else ""))
    ratio = results["dask"][1] / results["threads"][1]
    print(f"dask / threads wall time: {ratio:.2f}")


if __name__ == "__main__":
    main()
