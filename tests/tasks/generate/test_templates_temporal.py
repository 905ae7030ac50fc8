"""Temporal template questions from segments: keys are the annotations, options never repeat."""

import json

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import SegmentRecord
from benchfoundry.core.taxonomy import load_taxonomy
from benchfoundry.tasks.generate.drafts import Rules, to_candidate
from benchfoundry.tasks.generate.templates_temporal import temporal_drafts


def segment(
    clip: str,
    order: int,
    label: str,
    family: str | None = None,
    kind: str = "videos:segments",
    placeholders: tuple[str, ...] = (),
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
        placeholders=list(placeholders),
    )


def test_keys_are_the_annotations_and_no_option_repeats():
    steps = ["crack the egg", "whisk the egg", "pour the milk", "Stir the pan"]
    segments = [segment("cook", i, label) for i, label in enumerate(steps)]
    segments += [segment("other", 0, "stir the pan"), segment("other", 1, "fry the egg")]
    ssv2 = [
        segment(
            f"s{i}", 0, f"Moving {thing} {where}", f"Moving [something] {where}", "videos:ssv2",
            (thing,),
        )
        for i, (thing, where) in enumerate([("cup", "up"), ("cup", "down"), ("pen", "up")])
    ]  # fmt: skip
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
    # Each option carries its action's parts as the annotation gave them (or its label alone).
    key = cup_up.option_slots[LETTERS.index(cup_up.answer)]
    assert key == {
        "label": "Moving cup up", "template": "Moving [something] up", "placeholders": '["cup"]',
    }  # fmt: skip
    assert order.option_slots[LETTERS.index(order.answer)]["labels"] == json.dumps(steps)
    assert all(s == {"label": s["label"]} for s in json.loads(order.slots["actions"]))
    # Procedures: the image is a keyframe of the stretch; prediction never shows the answer.
    assert all(
        c.image_id.startswith("cook-") or c.image_id.startswith(("other-", "s")) for c in candidates
    )
    assert made.not_asked[("action_prediction", "single_segment")] == 3
    assert made.not_asked[("procedure_understanding", "few_segments")] == 4


def test_overlapping_actions_are_not_asked_in_order_or_as_what_comes_next():
    """EPIC-KITCHENS narrations overlap: a stretch that holds the next action is never shown
    as 'what comes next', and overlapping actions are not put in an order."""
    steps = [
        segment("kitchen", i, label)
        for i, label in enumerate(["open fridge", "take milk", "close fridge"])
    ]
    steps[0] = steps[0].model_copy(update={"end": 5.0})  # open fridge 0-5 s holds take milk 2-4 s
    made = temporal_drafts(steps, load_taxonomy("seed_bench"), seed=1)
    kinds = [d.generator for d in made.drafts]
    assert kinds.count("template:next_action") == 0 and "template:action_order" not in kinds
    assert made.not_asked[("action_prediction", "overlapping_segments")] == 2
    assert made.not_asked[("procedure_understanding", "overlapping_segments")] == 1


def test_the_generator_llm_writes_distractors_and_a_bad_reply_keeps_the_offline_ones(tmp_path):
    """Over real HTTP: recognition and prediction drafts get the model's distractors; a reply
    that is not JSON, or whose options repeat the answer, leaves the offline ones, counted."""
    import json
    import re

    from benchfoundry.core.records import CandidateRecord
    from benchfoundry.devtools.synthetic_video import write_clips
    from benchfoundry.devtools.testserver import Script, TestServer
    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.sources.models import VideoSource
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.generate.options import GenerateOptions
    from benchfoundry.tasks.generate.stage import generate_all
    from benchfoundry.tasks.ingest.options import IngestOptions
    from benchfoundry.tasks.ingest.stage import run as ingest

    write_clips(tmp_path / "corpus", 0, 2, seed=4)
    folder = tmp_path / "corpus" / "procedures"
    run = RunFolder(tmp_path / "run")
    ingest(StageRun.make(run, sources=[VideoSource(path=folder, annotations=folder / "segments.csv")],
                         ingest=IngestOptions(keyframes=2)))  # fmt: skip
    labels = [s.label for s in run.table(SegmentRecord).records()]

    def reply(request) -> str:
        answer = re.search(r'The right answer: "(.*?)"', request.text).group(1)
        if answer == labels[0]:
            return "I would rather not."
        if answer == labels[1]:
            return json.dumps({"distractors": [answer.upper(), "wave", "wave"]})
        return json.dumps({"distractors": [f"never {answer}", "sweep the floor", "open a door"]})

    with TestServer(Script(default=reply)) as server:
        summary = generate_all(
            run,
            GenerateOptions(llm=True),
            "seed_bench",
            {"generator": [f"openai/w@{server.base_url}"]},
        )
        asked = server.stats.requests
    candidates = run.table(CandidateRecord).records()
    written = [c for c in candidates if "+llm:" in c.generator]
    offline = [
        c
        for c in candidates
        if c.dimension != "procedure_understanding" and "+llm:" not in c.generator
    ]
    assert asked == len(written) + len(offline) and written and offline
    for c in written:
        key = c.options[LETTERS.index(c.answer)]
        assert sorted(o for o in c.options if o != key) == sorted(
            [f"never {key}", "sweep the floor", "open a door"]
        )
        assert c.prompt_id.startswith("temporal_distractors@") and c.raw_output
    assert {c.options[LETTERS.index(c.answer)] for c in offline} <= {labels[0], labels[1]}
    counts: dict[str, int] = {}
    for per in summary.per_dimension.values():
        for k, v in per.items():
            counts[k] = counts.get(k, 0) + v
    assert counts["llm_distractors"] == len(written)
    assert counts["llm_distractors_offline:malformed_output"] == len(offline)
