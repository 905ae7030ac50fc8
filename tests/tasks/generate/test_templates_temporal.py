"""Temporal template questions from segments: keys are the annotations, options never repeat."""

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import SegmentRecord
from benchfoundry.core.taxonomy import load_taxonomy
from benchfoundry.tasks.generate.drafts import Rules, to_candidate
from benchfoundry.tasks.generate.templates_temporal import temporal_drafts


def segment(
    clip: str, order: int, label: str, family: str | None = None, kind: str = "videos:segments"
):
    return SegmentRecord(
        segment_id=f"{clip}-{order}",
        clip_id=clip,
        video=f"{clip}.mp4",
        start=order * 2.0,
        end=order * 2.0 + 2,
        label=label,
        family=family,
        order=order,
        source=f"segments.csv#line={order + 2}",
        source_kind=kind,
        frames=[f"{clip}-{order}-f{i}" for i in range(3)],
        frame_times=[order * 2.0 + t for t in (0.3, 1.0, 1.7)],
    )


def test_keys_are_the_annotations_and_no_option_repeats():
    steps = ["crack the egg", "whisk the egg", "pour the milk", "Stir the pan"]
    segments = [segment("cook", i, label) for i, label in enumerate(steps)]
    segments += [segment("other", 0, "stir the pan"), segment("other", 1, "fry the egg")]
    ssv2 = [
        segment(f"s{i}", 0, f"Moving {thing} {where}", f"Moving [something] {where}", "videos:ssv2")
        for i, (thing, where) in enumerate([("cup", "up"), ("cup", "down"), ("pen", "up")])
    ]
    made = temporal_drafts(segments + ssv2, load_taxonomy("seed_bench"), seed=3)
    candidates = [to_candidate(d, 3, Rules()) for d in made.drafts]
    by = {}
    for c in candidates:
        by.setdefault(c.dimension, []).append(c)
        assert len({o.casefold() for o in c.options}) == len(c.options)
    assert len(by["action_recognition"]) == 9 and len(by["procedure_understanding"]) == 1
    order = by["procedure_understanding"][0]
    assert order.options[LETTERS.index(order.answer)] == ", then ".join(steps)
    nexts = {
        c.meta["end"]: c.options[LETTERS.index(c.answer)]
        for c in by["action_prediction"]
        if c.meta["video"] == "cook.mp4"
    }
    assert nexts == {"2": "whisk the egg", "4": "pour the milk", "6": "Stir the pan"}
    # "stir the pan" from the other video is the answer's own words: never a distractor of it.
    stir = next(
        c for c in by["action_prediction"] if c.options[LETTERS.index(c.answer)] == "Stir the pan"
    )
    assert [o for o in stir.options if o.casefold() == "stir the pan"] == ["Stir the pan"]
    # SSv2: the same object in the other template comes first among the distractors.
    cup_up = next(c for c in by["action_recognition"] if c.meta["video"] == "s0.mp4")
    assert "Moving cup down" in cup_up.options and len(cup_up.options) == 3  # all the set has
    # Procedures: the image is a keyframe of the stretch; prediction never shows the answer.
    assert all(
        c.image_id.startswith("cook-") or c.image_id.startswith(("other-", "s")) for c in candidates
    )
    assert made.not_asked[("action_prediction", "single_segment")] == 3
    assert made.not_asked[("procedure_understanding", "few_segments")] == 4
