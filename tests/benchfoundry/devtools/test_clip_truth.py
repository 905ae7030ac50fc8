"""A synthetic clip's truth is what its renderer drew: the motion named from the drawn states
says what the annotation says, for every template and every procedure verb."""

import csv
import json

from benchfoundry.devtools.clip_truth import load_drawn
from benchfoundry.devtools.synthetic_video import STEPS, TEMPLATES, write_clips


def test_the_drawn_motions_say_what_the_annotations_say(tmp_path):
    write_clips(tmp_path, len(TEMPLATES), 4, seed=3)
    drawn = load_drawn(tmp_path / "clips", "ssv2")
    labels = json.loads((tmp_path / "clips" / "labels.json").read_text())
    assert {e["template"] for e in labels} == set(TEMPLATES)  # every template drawn once
    for entry in labels:
        (step,) = drawn[f"{entry['id']}.mp4"]
        assert step.slots == {
            "template": entry["template"],
            "placeholders": json.dumps(entry["placeholders"]),
        }
    drawn = load_drawn(tmp_path / "procedures", "segments")
    with open(tmp_path / "procedures" / "segments.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["verb"] for r in rows} <= set(STEPS) and len(rows) == 14
    for video in {r["video"] for r in rows}:
        annotated = [(r["verb"], r["noun"]) for r in rows if r["video"] == video]
        shown = [(s.slots["verb"], s.slots["action_noun"]) for s in drawn[video]]
        assert shown == annotated
