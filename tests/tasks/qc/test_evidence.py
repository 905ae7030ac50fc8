"""The evidence reader on a real run: drawings made here go through ingest, extract and the
template generator; some keys are then set to a wrong option, and quality control's select
step (no model asked) flags exactly those, saying what the reader read."""

from __future__ import annotations

import math

import pytest
from PIL import Image, ImageDraw

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import CandidateRecord, ImageSourceRecord, ScoredRecord
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
from benchfoundry.tasks.qc.stage import select_all


def _drawings(folder):
    folder.mkdir()
    image = Image.new("RGB", (320, 240), "white")
    draw = ImageDraw.Draw(image)
    draw.polygon([(240 + 36 * math.cos(a * math.pi / 3), 70 + 36 * math.sin(a * math.pi / 3))
                  for a in range(6)], fill=(255, 140, 0))  # fmt: skip
    draw.rectangle((30, 40, 90, 100), fill=(0, 0, 200))
    draw.ellipse((120, 150, 190, 220), fill=(0, 150, 0))
    image.save(folder / "shapes.png")
    image = Image.new("RGB", (320, 240), (230, 240, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 30, 70, 80), fill=(200, 30, 30))
    draw.rectangle((240, 30, 290, 80), fill=(200, 30, 30))
    draw.polygon([(160, 140), (200, 210), (120, 210)], fill=(30, 30, 200))
    image.save(folder / "two-red.png")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    work = tmp_path_factory.mktemp("evidence")
    _drawings(work / "drawings")
    run = RunFolder(work / "run")
    sources = [FolderSource(path=work / "drawings")]
    ingest_stage(StageRun.make(run, sources=sources, ingest=IngestOptions()))
    extract_stage(StageRun.make(run, extract=ExtractOptions(captioner="none")))
    generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    return run


def test_keys_set_wrong_are_flagged_with_what_the_reader_read(generated):
    run = generated
    candidates = run.table(CandidateRecord).records()
    kinds = {c.generator for c in candidates}
    assert {"template:count", "template:identity", "template:position"} <= kinds
    wrong = {}
    for k, c in enumerate(sorted(candidates, key=lambda c: c.question_id)):
        if k % 3 == 0:  # every third key moved to the next option: wrong
            letter = LETTERS[(LETTERS.index(c.answer) + 1) % len(c.options)]
            wrong[c.question_id] = c.model_copy(update={"answer": letter})
    run.table(CandidateRecord).rewrite(
        [wrong.get(c.question_id, c) for c in candidates], drop=lambda row: True
    )
    quiet = FilterOptions(blind=[], chance=[])
    summary = select_all(run, quiet, ConsensusOptions(), SelectOptions(), {}, steps=("select",))
    scored = {s.question_id: s for s in run.table(ScoredRecord).records()}
    flagged = {q for q, s in scored.items() if "possibly_flawed" in s.flags}
    answered = {c.question_id for c in candidates if c.generator != "template:read_text"}
    # the hexagon straddles the cells of the top right: the reader names no place for it, so it
    # abstains on what lies at any place of that picture (the hexagon could be there; the two
    # readings that wrote the key placed it)
    shapes = {
        s.image_id
        for s in run.table(ImageSourceRecord).records()
        if s.source.endswith("shapes.png")
    }
    unplaced = {
        c.question_id for c in candidates if c.slots.get("position") and c.image_id in shapes
    }
    assert unplaced and flagged == set(wrong) & answered - unplaced and len(flagged) >= 4
    assert summary.evidence["read_otherwise"] == len(flagged)
    verdicts = ("confirmed", "read_otherwise", "not_answered")
    assert sum(summary.evidence[v] for v in verdicts) == len(candidates)  # every one a template's
    assert summary.evidence_line() in "\n".join(summary.lines())
    reason = scored[sorted(flagged)[0]].reason
    assert "evidence reader's own reading of the pixels" in reason and "not the key's" in reason
    select_all(run, quiet, ConsensusOptions(evidence=False), SelectOptions(), {}, steps=("select",))
    assert not any(s.flags for s in run.table(ScoredRecord).records())


def test_the_reader_reads_printed_text_with_its_own_ocr_engine():
    """What text the image holds comes from the reader's own OCR lines (`Reading.texts`), not
    from the facts that wrote the key; a line it misread is no verdict, no writing found
    anywhere is a doubt, and with no OCR engine it says nothing of text at all."""
    from benchfoundry.evidence.reading import Reading
    from benchfoundry.evidence.text import Line
    from benchfoundry.tasks.qc.evidence import check

    texts = ["OPEN DAILY", "OPEN DAIIY", "CLOSED DAILY"]
    item = CandidateRecord(
        question_id="q", image_id="i", dimension="text_understanding", hint=None,
        question="Which text is written in the image?", options=texts, answer="A",
        category=None, l2_category=None, split=None, generator="template:read_text",
        prompt_id=None, prompt_hash=None, evidence=[], source="template", meta={},
        raw_output=None, slots={}, option_slots=[{"text": t} for t in texts],
    )  # fmt: skip
    read = Reading([], (320, 240), "white", 1, (Line("Open daily", (20, 20, 140, 50)),))
    assert check(item, read).agrees
    wrong = check(item.model_copy(update={"answer": "C"}), read)
    assert not wrong.agrees and "option A" in wrong.read
    missed = Reading([], (320, 240), "white", 1, (Line("0PEN", (20, 20, 80, 50)),))
    assert check(item, missed) is None
    no_engine = Reading([], (320, 240), "white", 0, (), "tesseract is not installed")
    assert check(item, no_engine) is None
    # its engine ran and found no writing anywhere: that contradicts the key (a logo's lettering
    # that the key's engines cut short), so it doubts, saying so
    blank = check(item, Reading([], (320, 240), "white", 0, ()))
    assert not blank.agrees and "reads no text anywhere" in blank.read
    content = item.model_copy(update={"generator": "template:scene_content",
                                      "option_slots": [{"fixed": "text_no_objects"}] * 3})  # fmt: skip
    assert check(content, read).agrees and check(content, no_engine) is None


def test_a_thing_at_the_middle_lies_in_neither_half_for_the_reader():
    """A blur shaves a tip off a shape: the reader does not place a thing reaching 1.5% of the
    side or nearer to the middle in either half (a person would hesitate)."""
    from benchfoundry.evidence.reading import Reading, Thing
    from benchfoundry.tasks.qc.evidence import ReadingScene

    def thing(x0, x1):
        return Thing("red", "square", (x0, 10.0, x1, 50.0), 1600, None)

    scene = ReadingScene(Reading([], (400, 300), "white"))
    assert scene.half(_as_scene_thing(thing(100, 190)), "x") == "before"  # 10 px short of 200
    assert scene.half(_as_scene_thing(thing(100, 196)), "x") is None  # 4 px: within 6 px
    assert scene.half(_as_scene_thing(thing(207, 260)), "x") == "after"
    assert scene.half(_as_scene_thing(thing(203, 260)), "x") is None


def _as_scene_thing(t):
    from benchfoundry import meaning

    return meaning.Thing(t.colour, t.box, float(t.area), t.position, noun=t.noun)


def test_the_reader_counts_nothing_a_person_would_count_differently():
    """Three stripes that meet (a flag) or a housing holding two lights: the reader's own rule
    says people count these differently, so it doubts any count keyed on them; three things
    apart it counts."""
    from benchfoundry.evidence.reading import Reading, Thing
    from benchfoundry.tasks.qc.evidence import check

    def stripe(colour, x0, x1, y0=88.0, y1=200.0):
        return Thing(colour, "rectangle", (x0, y0, x1, y1), int((x1 - x0) * (y1 - y0)), None)

    item = CandidateRecord(
        question_id="q", image_id="i", dimension="instances_counting", hint=None,
        question="How many objects are there in the image?", options=["2", "3", "4", "5"],
        answer="B", category=None, l2_category=None, split=None, generator="template:count",
        prompt_id=None, prompt_hash=None, evidence=[], source="template", meta={},
        raw_output=None, slots={}, option_slots=[{"number": n} for n in "2345"],
    )  # fmt: skip
    flag = [stripe("black", 133, 192), stripe("white", 193, 252), stripe("orange", 253, 311)]
    doubt = check(item, Reading(flag, (384, 288), "white"))
    assert not doubt.agrees and "count differently" in doubt.read
    apart = [stripe("black", 20, 80), stripe("white", 150, 210), stripe("orange", 290, 350)]
    assert check(item, Reading(apart, (384, 288), "white")).agrees
    lights = [stripe("black", 150, 230, 20, 260), stripe("red", 170, 210, 40, 80),
              stripe("green", 170, 210, 200, 240)]  # fmt: skip
    housing = check(item, Reading(lights, (384, 288), "white"))
    assert not housing.agrees and "count differently" in housing.read
