import csv
import io
import random
from pathlib import Path

import numpy as np
from PIL import Image

from benchfoundry.devtools.synthetic import (
    PALETTE,
    load_truth,
    make_scenes,
    reference_questions,
    render,
    write_corpus,
)

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "benchfoundry" / "data" / "demo" / "synthetic"


def test_rendered_objects_match_their_truth():
    for scene in make_scenes(n_objects=20, n_text=0, seed=3):
        image = render(scene)
        assert 1 <= len(scene.objects) <= 7
        for obj in scene.objects:
            assert image.getpixel(obj.center) == PALETTE[obj.colour], (scene.scene_id, obj)
            x0, y0, x1, y1 = obj.box
            assert 0 <= x0 < x1 <= scene.width and 0 <= y0 < y1 <= scene.height
        for a in scene.objects:
            for b in scene.objects:
                if a is not b:
                    assert (
                        a.box[2] < b.box[0]
                        or b.box[2] < a.box[0]
                        or a.box[3] < b.box[1]
                        or b.box[3] < a.box[1]
                    )


def test_text_lines_are_drawn_inside_their_boxes():
    for scene in make_scenes(n_objects=0, n_text=8, seed=4):
        image = render(scene).convert("L")
        for line in scene.text_lines:
            assert np.asarray(image.crop(line.box)).min() < 60, "dark text pixels inside the box"
            assert line.box[0] >= 0 and line.box[2] <= scene.width and line.box[3] <= scene.height


def test_reference_answers_follow_from_truth():
    rng = random.Random(0)
    for scene in make_scenes(n_objects=15, n_text=5, seed=5):
        for q in reference_questions(scene, rng):
            key = q.options["ABCD".index(q.answer)]
            if q.question.startswith("How many"):
                shape = q.question.split()[2][:-1]
                assert int(key) == scene.count(shape)
            elif q.question.startswith("What colour"):
                shape = q.question.rstrip("?").split()[-1]
                assert [o.colour for o in scene.objects if o.shape == shape] == [key]
            else:
                assert key in " ".join(line.text for line in scene.text_lines).split()
            assert len(set(q.options)) == 4


def test_corpus_is_reproducible_and_the_committed_demo_matches(tmp_path):
    # The demo's scenes: `benchfoundry synth --contact 12 --flat 6 --seed 0` (24 object, 12
    # text, 12 contact and 6 flat scenes; the first 36 as they were before contact scenes
    # existed, the first 48 as before flat scenes).
    counts = write_corpus(tmp_path, n_objects=24, n_text=12, seed=0, n_contact=12, n_flat=6)
    assert counts == {"scenes": 54, "questions": 82}
    assert load_truth(tmp_path) == load_truth(DEMO)
    for entry in load_truth(DEMO)[:5] + load_truth(DEMO)[-3:]:
        fresh = Image.open(tmp_path / entry["file"])
        committed = Image.open(DEMO / entry["file"])
        assert fresh.tobytes() == committed.tobytes()
    rows = list(
        csv.DictReader(io.StringIO((tmp_path / "questions.tsv").read_text()), delimiter="\t")
    )
    assert [r["question"] for r in rows] == [
        r["question"]
        for r in csv.DictReader(io.StringIO((DEMO / "questions.tsv").read_text()), delimiter="\t")
    ]
    references = [r for r in rows if len(r["image"]) <= 64]
    assert references and all(rows[int(r["image"]) - 1]["index"] == r["image"] for r in references)


def test_contact_scenes_hold_what_their_truth_says():
    from benchfoundry.devtools.scene_shapes import shape_mask, visible_masks

    scenes = make_scenes(n_objects=0, n_text=0, seed=6, n_contact=12)
    seen = {r.relation for s in scenes for r in s.relations}
    assert seen == {"contains", "overlaps", "touches"}
    for scene in scenes:
        assert scene.kind == "contact" and scene.relations
        assert len({o.colour for o in scene.objects}) == len(scene.objects)
        masks = [shape_mask(o, scene.width, scene.height) for o in scene.objects]
        shown = visible_masks(scene.objects, scene.width, scene.height)
        image = np.asarray(render(scene))
        for obj, mask in zip(scene.objects, shown, strict=True):
            assert (image[mask] == PALETTE[obj.colour]).all(), (scene.scene_id, obj)
        related = {(r.a, r.b) for r in scene.relations} | {(r.b, r.a) for r in scene.relations}
        for r in scene.relations:
            a, b = masks[r.a], masks[r.b]
            if r.relation == "contains":
                assert not (b & ~a).any()
            elif r.relation == "overlaps":
                assert (a & b).any() and (a & ~b).any() and (b & ~a).any()
            else:
                assert not (a & b).any()
        for i, a in enumerate(scene.objects):  # everything else stands apart
            for j, b in enumerate(scene.objects):
                if i < j and (i, j) not in related:
                    assert (
                        max(b.box[0] - a.box[2], a.box[0] - b.box[2]) > 8
                        or max(b.box[1] - a.box[3], a.box[1] - b.box[3]) > 8
                    )


def test_contact_scenes_come_after_and_leave_the_others_as_they_were(tmp_path):
    plain = make_scenes(n_objects=4, n_text=2, seed=8)
    more = make_scenes(n_objects=4, n_text=2, seed=8, n_contact=3)
    assert more[:6] == plain and [s.kind for s in more[6:]] == ["contact"] * 3
    write_corpus(tmp_path, n_objects=2, n_text=1, seed=8, n_contact=2)
    truth = load_truth(tmp_path)
    assert [("relations" in t) for t in truth] == [False, False, False, True, True]
    assert all({"a", "b", "relation"} == set(r) for t in truth[3:] for r in t["relations"])
