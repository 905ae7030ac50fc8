"""Check every template key of a release against its image's truth, where the truth is known.

    python bench/release_keys.py datasets/releases/demo/latest [--truth FOLDER ...]

Each row is judged by what its kind means (`benchfoundry.meaning`) from the parts its question
was written from: its candidate in the run the release was built from (`--run`, the demo's by
default), where those parts still write the row's text (not where review edited it). The truth
comes from the synthetic corpora's `truth.jsonl` (the demo's own by default, and any `--truth`
folder written by `benchfoundry synth` or `devtools.hard_drawings`, matched by file name) and
from the hand-written truth of packaged pictures (`devtools.hard_packaged`); a clip question's
key is checked against what the demo's clips were drawn to show (`drawn.jsonl`, not the
annotation files the generator read). Prints, per
template kind, keys checked, right, and those with no truth to check them by (listed, with their
image, for a person to look at), then every wrong key.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEMO = Path(__file__).resolve().parents[1] / "benchfoundry" / "data" / "demo"
RUN = Path(__file__).resolve().parents[1] / "datasets" / "runs" / "demo"


def truths(folders: list[Path]) -> dict[str, dict]:
    """File name -> truth, from each folder's truth.jsonl and the packaged pictures'."""
    from benchfoundry.devtools.hard_packaged import packaged_pictures
    from benchfoundry.devtools.synthetic import load_truth

    out = {name: truth for name, _, truth in packaged_pictures()}
    for folder in folders:
        for truth in load_truth(folder):
            out[truth["file"].rsplit("/", 1)[-1]] = truth
    return out


def drawn() -> dict[str, list]:
    """The demo clips' truth as they were drawn (`devtools.clip_truth`): video file -> steps."""
    from benchfoundry.devtools.clip_truth import load_drawn

    video = DEMO / "video"
    return load_drawn(video / "clips", "ssv2") | load_drawn(video / "procedures", "segments")


@dataclass
class Row:
    """A released row with the parts its question was written from (the run's candidate)."""

    generator: str
    slots: dict[str, str]
    option_slots: list[dict[str, str]]
    answer: str
    meta: dict[str, str]


def parts_of(run: Path) -> dict[str, object]:
    """The run's candidates by question id: a released row's parts."""
    from benchfoundry.core.records import CandidateRecord
    from benchfoundry.storage.tables import RunFolder

    return {c.question_id: c for c in RunFolder(run).table(CandidateRecord).records()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", type=Path, help="a release's version folder (or latest)")
    parser.add_argument("--truth", type=Path, action="append", default=[])
    parser.add_argument("--run", type=Path, default=RUN, help="the run the release was built from")
    args = parser.parse_args()
    import pandas as pd

    from benchfoundry import meaning
    from benchfoundry.core.letters import index_of
    from benchfoundry.devtools.generate_check import clip_verdict
    from benchfoundry.devtools.truth_check import check_item

    known = truths([DEMO / "synthetic", *args.truth])
    steps = drawn()
    candidates = parts_of(args.run)
    release = args.release.resolve()
    if release.is_file():  # `latest`: a pointer holding the version's name
        release = release.parent / release.read_text(encoding="utf-8").strip()
    data = release / "data"
    rows = pd.concat(pd.read_parquet(p) for p in sorted(data.glob("test-*.parquet")))
    checked, right, unchecked = Counter(), Counter(), Counter()
    wrong, unknown = [], []
    for row in rows.to_dict("records"):
        row = {**row, **(row.get("meta_info") or {})}  # generator, image and video sources
        if not str(row.get("generator")).startswith("template:"):
            continue
        kind = row["generator"].removeprefix("template:")
        options = list(row["options"])
        keyed = options[index_of(row["answer"])]
        name = str(row["image_source"]).rsplit("/", 1)[-1]
        c = candidates.get(row["question_id"])
        language = row.get("language") or "en"
        parts = (
            Row(
                row["generator"],
                dict(c.slots),
                [dict(o) for o in c.option_slots],
                row["answer"],
                dict(c.meta),
            )  # fmt: skip
            if c is not None
            and meaning.written(kind, c.slots, c.option_slots, language)
            == (row["question"], options)
            else None
        )  # none where review edited the text, or the run is not the release's
        ok = expected = None
        if parts is not None and isinstance(row.get("video"), str) and row["video"]:
            verdict = clip_verdict(parts, steps)
            ok, expected = verdict.right, verdict.why
        elif parts is not None and name in known:
            verdict = check_item(parts, known[name])
            ok, expected = verdict.right, verdict.expected
        if ok is None:
            unchecked[kind] += 1
            unknown.append(f"[{kind}] {row['image_source']}: {row['question']} keyed {keyed!r}")
            continue
        checked[kind] += 1
        right[kind] += ok
        if not ok:
            wrong.append(f"[{kind}] {name}: {row['question']} keyed {keyed!r}, truth {expected!r}")
    total = sum(checked.values())
    print(
        f"{len(rows)} released questions; {total} template keys checked against the truth: "
        f"{sum(right.values())} right; {sum(unchecked.values())} with no truth to check"
    )
    for kind in sorted(set(checked) | set(unchecked)):
        print(f"  {kind:<20} {right[kind]}/{checked[kind]} right, {unchecked[kind]} unchecked")
    for line in wrong:
        print("  wrong:", line)
    for line in unknown:
        print("  no truth:", line)


if __name__ == "__main__":
    main()
