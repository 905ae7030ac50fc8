"""Check every template key of a release against its image's truth, where the truth is known.

    python bench/release_keys.py datasets/releases/demo/latest [--truth FOLDER ...]

The truth comes from the synthetic corpora's `truth.jsonl` (the demo's own by default, and any
`--truth` folder written by `benchfoundry synth` or `devtools.hard_drawings`, matched by file
name) and from the hand-written truth of packaged pictures (`devtools.hard_packaged`); a clip
question's key is checked against the annotation files of the demo's clips. Prints, per
template kind, keys checked, right, and those with no truth to check them by (listed, with their
image, for a person to look at), then every wrong key.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEMO = Path(__file__).resolve().parents[1] / "benchfoundry" / "data" / "demo"


def truths(folders: list[Path]) -> dict[str, dict]:
    """File name -> truth, from each folder's truth.jsonl and the packaged pictures'."""
    from benchfoundry.devtools.hard_packaged import packaged_pictures
    from benchfoundry.devtools.synthetic import load_truth

    out = {name: truth for name, _, truth in packaged_pictures()}
    for folder in folders:
        for truth in load_truth(folder):
            out[truth["file"].rsplit("/", 1)[-1]] = truth
    return out


def annotated() -> dict[str, list[tuple[float, float, str]]]:
    """The demo clips' annotated steps: video file -> (start, end, label), in time order."""
    steps: dict[str, list[tuple[float, float, str]]] = {}
    clips = DEMO / "video" / "clips" / "labels.json"
    for entry in json.loads(clips.read_text(encoding="utf-8")):
        steps[f"{entry['id']}.mp4"] = [(0.0, -1.0, entry["label"])]
    with open(DEMO / "video" / "procedures" / "segments.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            steps.setdefault(row["video"], []).append(
                (float(row["start"]), float(row["end"]), row["label"])
            )
    return {video: sorted(s) for video, s in steps.items()}


def clip_truth(row: dict, steps: dict[str, list[tuple[float, float, str]]]) -> str | None:
    video = (row.get("video_source") or "").rsplit("/", 1)[-1]
    if video not in steps or row.get("clip_start") is None:
        return None
    start, end = float(row["clip_start"]), float(row["clip_end"])
    kind = row["generator"].removeprefix("template:")
    if kind == "action_label":
        return next((lab for s, e, lab in steps[video] if s == start and e in (-1.0, end)), None)
    if kind == "next_action":
        return next((lab for s, _, lab in steps[video] if s >= end), None)
    return ", then ".join(label for _, _, label in steps[video])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", type=Path, help="a release's version folder (or latest)")
    parser.add_argument("--truth", type=Path, action="append", default=[])
    args = parser.parse_args()
    import pandas as pd

    from benchfoundry.core.letters import index_of
    from benchfoundry.devtools.truth_check import check

    known = truths([DEMO / "synthetic", *args.truth])
    steps = annotated()
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
        if isinstance(row.get("video"), str) and row["video"]:
            expected = clip_truth(row, steps)
            ok = None if expected is None else keyed == expected
        elif name in known:
            verdict = check(row["question"], options, row["answer"], known[name])
            ok, expected = verdict.right, verdict.expected
        else:
            ok = None
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
