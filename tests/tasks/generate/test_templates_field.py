"""Issue 53's items 2, 3 and 4 through the command line, as a process: `benchfoundry build`
(ingest, extract, generate) over a handful of field pictures with their truth. Every template key
is what a careful person answers (`devtools.field_check`); the teal and navy shapes get no colour
question and no count by the colours they could be given; two translucent shapes that overlap
are counted as two; a traffic light and a striped box are not counted; one drawing at 96 px and
at its drawn size gets the same questions and keys (three sizes: the in-process test of
`tests/extractors/test_objects_people_count.py`)."""

import json
import random
import subprocess
import sys
from pathlib import Path

from benchfoundry.core.letters import index_of
from benchfoundry.core.records import CandidateRecord, ImageSourceRecord
from benchfoundry.devtools.field_check import check_field
from benchfoundry.devtools.field_pictures import (
    OFF_PALETTE,
    sizes,
    striped_box,
    traffic_light,
    translucent,
)
from benchfoundry.devtools.hard_drawings import Drawing, truth
from benchfoundry.devtools.hard_shapes import draw_object, make_object
from benchfoundry.storage.tables import RunFolder

REPO = Path(__file__).resolve().parents[3]


def _off_palette() -> Drawing:
    """A teal square, a navy circle and a red triangle, apart, on light grey."""
    from PIL import Image, ImageDraw

    teal = make_object("square", None, (80, 90), 36)
    navy = make_object("circle", None, (300, 80), 34)
    red = make_object("triangle", "red", (190, 220), 36)
    image = Image.new("RGB", (384, 288), (235, 235, 235))
    draw = ImageDraw.Draw(image)
    for obj, name in ((teal, "teal"), (navy, "navy")):
        draw_object(draw, obj, OFF_PALETTE[name][0])
        obj["could_be"] = OFF_PALETTE[name][1]
    draw_object(draw, red, (215, 38, 38))
    return Drawing("off_palette", image, truth("off_palette", [teal, navy, red]))


def _corpus(folder: Path) -> None:
    drawings = [
        _off_palette(),
        translucent(random.Random("cli:0")),
        traffic_light(random.Random("cli")),
        striped_box(random.Random("cli")),
        *sizes(3, (96, 384), ("circle", "square", "triangle")),
    ]
    (folder / "images").mkdir(parents=True)
    lines = []
    for k, drawing in enumerate(drawings):
        name = f"{drawing.family}-{k}.png"
        drawing.image.save(folder / "images" / name)
        lines.append(json.dumps({"file": f"images/{name}", "scene_id": name, **drawing.truth}))
    (folder / "truth.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_field_pictures_get_keys_people_agree_on_through_the_cli(tmp_path):
    _corpus(tmp_path / "corpus")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: field\nsources: [{kind: folder, path: corpus/images}]\ntaxonomy: seed_bench\n"
        "stages: [ingest, extract, generate]\n"
        "options:\n  extract: {captioner: none, ocr: none, second_ocr: none}\n  generate: {llm: false}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchfoundry", "build", str(spec), "--out", str(tmp_path / "run")],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run = RunFolder(tmp_path / "run")
    truths = [json.loads(line) for line in (tmp_path / "corpus" / "truth.jsonl").open()]
    by_name = {t["file"].rsplit("/", 1)[-1]: t for t in truths}
    scene_of = {
        link.image_id: by_name[link.source.rsplit("/", 1)[-1]]
        for link in run.table(ImageSourceRecord).records()
    }
    asked: dict[str, list[CandidateRecord]] = {}
    for c in run.table(CandidateRecord).records():
        asked.setdefault(scene_of[c.image_id]["family"], []).append(c)
        verdict = check_field(c, scene_of[c.image_id])
        assert verdict.right, (c.question, c.options[index_of(c.answer)], verdict.why)
    off = asked["off_palette"]
    assert any(c.generator == "template:count" and not c.slots for c in off)
    assert not {c.slots.get("colour") for c in off} & {"blue", "green", "cyan", "purple"}
    assert all(c.option_slots[index_of(c.answer)].get("colour") == "red"
               for c in off if c.generator == "template:colour")  # fmt: skip
    for family in ("traffic_light", "striped_box"):
        assert not [c for c in asked.get(family, []) if c.generator == "template:count"]

    def same(family: str) -> set:
        return {
            (c.question, c.options[index_of(c.answer)])
            for c in asked.get(family, [])
            if c.generator != "template:remove_and_count"  # its colour is drawn at random
        }

    assert same("size_384") and same("size_96") == same("size_384")
