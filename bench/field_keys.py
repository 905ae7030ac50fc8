"""How often template keys are right on field pictures: kinds of picture the bench did not draw
before issue 53 (off-palette colours, translucent overlaps, a traffic light, a striped box, a
flag, a slide, drop shadows, textured paper, cartoon outlines, tilted and hand-drawn shapes, and
one drawing at 96 px, 384 px and 6,000 px).

    python bench/field_keys.py [--per-family 3] [--seed 0]

Renders the pictures with their truth (`devtools/field_pictures.py`), runs ingest, extract and
the template generator, and checks every key against what a careful person answers
(`devtools/field_check.py`: a question a person would hesitate on counts as wrong). Prints the
share of keys right, per template kind and per family, the pictures asked anything, what was not
asked and why, the first wrong keys, and whether the one drawing at three sizes got the same
questions and keys (but for which colour "if the X objects were removed" names, which is drawn
at random for each image).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchfoundry.core import env  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-field-"))
    env.configure(work, console_level="CRITICAL")
    from benchfoundry.core.letters import index_of
    from benchfoundry.core.records import CandidateRecord
    from benchfoundry.core.taxonomy import load_taxonomy
    from benchfoundry.devtools.field_check import check_field
    from benchfoundry.devtools.field_pictures import write_field_corpus
    from benchfoundry.devtools.generate_check import build_templates, truth_by_image
    from benchfoundry.tasks.generate.options import GenerateOptions
    from benchfoundry.tasks.generate.stage import facts_by_image, image_sizes
    from benchfoundry.tasks.generate.template_questions import template_drafts

    started = time.perf_counter()
    write_field_corpus(work / "corpus", args.seed, args.per_family)
    run, _ = build_templates(work, work / "corpus")
    scene_of = truth_by_image(run, work / "corpus")
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong: list[str] = []
    asked: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for c in run.table(CandidateRecord).records():
        scene = scene_of[c.image_id]
        verdict = check_field(c, scene)
        kind = c.generator.removeprefix("template:")
        for tally in (by_kind[kind], by_family[scene["family"]]):
            tally[0] += verdict.right
            tally[1] += 1
        keyed = c.options[index_of(c.answer)]
        if kind != "remove_and_count":  # its colour is drawn at random for each image
            asked[c.image_id].add((c.question, keyed))
        if not verdict.right:
            wrong.append(f"{scene['scene_id']}: {c.question} keyed {keyed!r} ({verdict.why})")
    not_asked: dict[str, Counter[str]] = defaultdict(Counter)
    taxonomy, sizes = load_taxonomy("seed_bench"), image_sizes(run)
    for record in facts_by_image(run):
        made = template_drafts(record, taxonomy, [], GenerateOptions(llm=False).seed,
                               sizes.get(record.image_id))  # fmt: skip
        for kind, tried in made.kinds.items():
            if tried.why_not:
                not_asked[kind][tried.why_not] += 1
    total, right = sum(t for _, t in by_kind.values()), sum(r for r, _ in by_kind.values())
    families = Counter(s["family"] for s in scene_of.values())
    print(
        f"{len(scene_of)} field pictures ({args.per_family} per family, seed {args.seed}): "
        f"{sum(1 for i in scene_of if asked[i])} got at least one question"
    )
    print(f"{total} template questions: {right} keys right = {100 * right / max(1, total):.1f}%")
    print("per template kind: asked, right; pictures not asked, by reason:")
    for kind in sorted(set(by_kind) | set(not_asked)):
        r, t = by_kind.get(kind, (0, 0))
        reasons = ", ".join(f"{k} {v}" for k, v in not_asked[kind].most_common())
        print(f"  {kind:<20} asked {t:>3}  right {r:>3}   not asked: {reasons or '-'}")
    print("per family: pictures, asked, right:")
    for family, n in sorted(families.items()):
        r, t = by_family.get(family, (0, 0))
        print(f"  {family:<14} {n:>2} pictures  asked {t:>3}  right {r:>3}")
    by_name = {s["family"]: i for i, s in scene_of.items() if s["family"].startswith("size_")}
    sets = {f: asked[i] for f, i in by_name.items()}
    same = len({frozenset(v) for v in sets.values()}) == 1
    print(
        "one drawing at 96, 384 and 6,000 px: "
        + ", ".join(f"{f} {len(v)} questions" for f, v in sorted(sets.items()))
        + ("; the same questions and keys" if same else "; NOT the same questions and keys")
    )
    if not same:
        base = sets.get("size_384", set())
        for family, found in sorted(sets.items()):
            for q, k in sorted(found ^ base):
                print(f"    {family}: {'only here' if (q, k) in found else 'missing'}: {q} -> {k}")
    for line in wrong[:15]:
        print("  wrong:", line)
    print(f"took {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
