"""Synthetic scenes with known ground truth, to measure the pipeline's own accuracy.

Object scenes hold shapes of known kind, colour, size, position and count; text scenes hold
rendered lines of known words; contact scenes hold shapes that touch, overlap or contain one
another, with the truth of which do (`relations`, read from the drawn masks). `write_corpus`
renders scenes to PNG, stores the truth beside them (`truth.jsonl`) and writes reference
questions with known answers as a VLMEvalKit MCQ TSV. Rendering is deterministic for a given
seed and Pillow version.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from benchfoundry import meaning
from benchfoundry.core.letters import letter
from benchfoundry.core.records import ImageRecord
from benchfoundry.devtools.contact_scenes import contact_objects
from benchfoundry.devtools.flat_scenes import SIDE, WHITE, flat_objects, render_flat
from benchfoundry.devtools.scene_shapes import (
    PALETTE,
    SHAPES,
    Relation,
    SceneObject,
    draw_shape,
    relations_of,
)

SIZES: dict[str, int] = {"small": 14, "medium": 24, "large": 38}  # half extent in pixels
WORDS = (
    "apple",
    "river",
    "garden",
    "window",
    "yellow",
    "engine",
    "planet",
    "silver",
    "forest",
    "bridge",
    "market",
    "candle",
    "rocket",
    "violin",
    "harbor",
    "tunnel",
    "castle",
    "pepper",
    "coffee",
    "museum",
    "orange",
    "pencil",
    "summer",
    "winter",
    "ticket",
    "bottle",
    "letter",
)
WIDTH, HEIGHT = 384, 288


@dataclass(frozen=True)
class TextLine:
    text: str
    box: tuple[int, int, int, int]
    font_size: int


@dataclass(frozen=True)
class Scene:
    scene_id: str
    kind: str
    width: int
    height: int
    background: tuple[int, int, int]
    objects: list[SceneObject] = field(default_factory=list)
    text_lines: list[TextLine] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    antialias: bool = False  # flat scenes: drawn large and scaled down

    def count(self, shape: str) -> int:
        return sum(1 for o in self.objects if o.shape == shape)

    def truth(self) -> dict:
        """The scene as stored in truth.jsonl (`relations` only where there are any, so that
        object and text scenes keep the truth they always had)."""
        data = asdict(self)
        if not self.relations:
            del data["relations"]
        if self.kind != "flat":
            del data["antialias"]
        return data


def _background(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(205, 250), rng.randint(205, 250), rng.randint(205, 250))


def _overlaps(box: tuple[int, int, int, int], placed: list[tuple[int, int, int, int]]) -> bool:
    margin = 6
    return any(
        box[0] < p[2] + margin
        and p[0] < box[2] + margin
        and box[1] < p[3] + margin
        and p[1] < box[3] + margin
        for p in placed
    )


def make_object_scene(scene_id: str, rng: random.Random) -> Scene:
    """A scene of 1-7 non-overlapping shapes on a plain light background."""
    objects: list[SceneObject] = []
    boxes: list[tuple[int, int, int, int]] = []
    wanted = rng.randint(1, 7)
    attempts = 0
    while len(objects) < wanted and attempts < 500:
        attempts += 1
        size = rng.choice(list(SIZES))
        half = SIZES[size]
        cx, cy = rng.randint(half + 4, WIDTH - half - 5), rng.randint(half + 4, HEIGHT - half - 5)
        box = (cx - half, cy - half, cx + half, cy + half)
        if _overlaps(box, boxes):
            continue
        boxes.append(box)
        objects.append(
            SceneObject(rng.choice(SHAPES), rng.choice(list(PALETTE)), size, (cx, cy), box)
        )
    return Scene(scene_id, "objects", WIDTH, HEIGHT, _background(rng), objects=objects)


def make_text_scene(scene_id: str, rng: random.Random) -> Scene:
    """A scene of 1-3 lines of 1-3 known words, in Pillow's bundled font."""
    lines: list[TextLine] = []
    words = rng.sample(WORDS, k=9)
    y = rng.randint(16, 40)
    for index in range(rng.randint(1, 3)):
        text = " ".join(words[index * 3 : index * 3 + rng.randint(1, 3)])
        font_size = rng.choice((26, 32, 38))
        font = ImageFont.load_default(size=font_size)
        left, top, right, bottom = font.getbbox(text)
        while right - left > WIDTH - 24:  # too wide for the image: a smaller font
            font_size -= 2
            font = ImageFont.load_default(size=font_size)
            left, top, right, bottom = font.getbbox(text)
        x = rng.randint(12, max(12, WIDTH - (right - left) - 12))
        box = (x + left, y + top, x + right, y + bottom)
        lines.append(TextLine(text, box, font_size))
        y = box[3] + rng.randint(22, 40)
    return Scene(scene_id, "text", WIDTH, HEIGHT, _background(rng), text_lines=lines)


def make_contact_scene(scene_id: str, rng: random.Random) -> Scene:
    """A scene of shapes of which some touch, overlap or contain one another, with the truth
    of which do."""
    objects = contact_objects(rng, WIDTH, HEIGHT)
    relations = relations_of(objects, WIDTH, HEIGHT)
    return Scene(
        scene_id, "contact", WIDTH, HEIGHT, _background(rng), objects=objects, relations=relations
    )


def make_flat_scene(scene_id: str, rng: random.Random) -> Scene:
    """One or two large shapes of pure colours on white, hard-edged or anti-aliased."""
    objects = flat_objects(rng)
    antialias = rng.random() < 0.5
    return Scene(scene_id, "flat", SIDE, SIDE, WHITE, objects=objects, antialias=antialias)


def render(scene: Scene) -> Image.Image:
    """Draw a scene."""
    if scene.kind == "flat":
        return render_flat(scene.objects, scene.antialias)
    image = Image.new("RGB", (scene.width, scene.height), scene.background)
    draw = ImageDraw.Draw(image)
    for obj in scene.objects:
        draw_shape(draw, obj, PALETTE[obj.colour])
    for line in scene.text_lines:
        font = ImageFont.load_default(size=line.font_size)
        left, top, _, _ = font.getbbox(line.text)
        draw.text((line.box[0] - left, line.box[1] - top), line.text, fill=(15, 15, 15), font=font)
    return image


def make_scenes(
    n_objects: int, n_text: int, seed: int = 0, n_contact: int = 0, n_flat: int = 0
) -> list[Scene]:
    """`n_objects` object scenes, `n_text` text scenes, `n_contact` contact scenes, then
    `n_flat` flat scenes, reproducible from `seed` (each kind is the same whatever the counts
    of the kinds after it are)."""
    rng = random.Random(seed)
    scenes = [make_object_scene(f"objects-{i:03d}", rng) for i in range(n_objects)]
    scenes += [make_text_scene(f"text-{i:03d}", rng) for i in range(n_text)]
    scenes += [make_contact_scene(f"contact-{i:03d}", rng) for i in range(n_contact)]
    scenes += [make_flat_scene(f"flat-{i:03d}", rng) for i in range(n_flat)]
    return scenes


@dataclass(frozen=True)
class ReferenceQuestion:
    """A reference question as parts (its kind, slots and each option's slots, `benchfoundry.meaning`),
    so that its text in every language is written from them."""

    scene_id: str
    kind: str
    slots: dict[str, str]
    option_slots: list[dict[str, str]]
    answer: str
    category: str
    l2_category: str

    @property
    def question(self) -> str:
        return meaning.question(self.kind, self.slots, "en")

    @property
    def options(self) -> list[str]:
        return [meaning.option(self.kind, o, "en") for o in self.option_slots]


def _mcq(rng: random.Random, correct: str, pool: list[str]) -> tuple[list[str], str]:
    distractors = rng.sample([p for p in pool if p != correct], k=3)
    options = [correct, *distractors]
    rng.shuffle(options)
    return options, letter(options.index(correct))


def reference_questions(scene: Scene, rng: random.Random) -> list[ReferenceQuestion]:
    """Questions whose answers follow from the scene's truth alone."""
    questions = []
    if scene.objects:
        shape = rng.choice(sorted({o.shape for o in scene.objects}))
        count = scene.count(shape)
        options, answer = _mcq(rng, str(count), [str(n) for n in range(0, 9)])
        questions.append(
            ReferenceQuestion(
                scene.scene_id,
                "count_shape",
                {"noun": shape},
                [{"number": o} for o in options],
                answer,
                "instances counting",
                "instance-level perception",
            )
        )
        unique = [o for o in scene.objects if scene.count(o.shape) == 1]
        if unique:
            obj = rng.choice(unique)
            options, answer = _mcq(rng, obj.colour, list(PALETTE))
            questions.append(
                ReferenceQuestion(
                    scene.scene_id,
                    "shape_colour",
                    {"noun": obj.shape},
                    [{"colour": o} for o in options],
                    answer,
                    "instance attributes",
                    "instance-level perception",
                )
            )
    else:
        present = [w for line in scene.text_lines for w in line.text.split()]
        word = rng.choice(present)
        options, answer = _mcq(rng, word, [w for w in WORDS if w not in present or w == word])
        questions.append(
            ReferenceQuestion(
                scene.scene_id,
                "read_word",
                {},
                [{"text": o} for o in options],
                answer,
                "text understanding",
                "text recognition",
            )
        )
    return questions


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


TSV_COLUMNS = [
    "index",
    "image",
    "question",
    "hint",
    "A",
    "B",
    "C",
    "D",
    "answer",
    "category",
    "l2-category",
    "split",
]
# Beside VLMEvalKit's columns, each question's parts (`benchfoundry.meaning`; JSON), which a seed keeps
# in its meta: its twins are written from them, as a template question's are.
PART_COLUMNS = ["template_kind", "template_slots", "template_option_slots"]


def write_corpus(
    folder: Path,
    n_objects: int = 24,
    n_text: int = 12,
    seed: int = 0,
    n_contact: int = 0,
    n_flat: int = 0,
) -> dict[str, int]:
    """Render scenes to `folder/images/`, the truth to `folder/truth.jsonl` and reference
    questions to `folder/questions.tsv` (VLMEvalKit MCQ format; a scene's second question
    refers to the first one's row for its image, as VLMEvalKit does)."""
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    scenes = make_scenes(n_objects, n_text, seed, n_contact, n_flat)
    rng = random.Random(seed + 1)
    truth_lines = []
    rows = []
    for scene in scenes:
        data = png_bytes(render(scene))
        (folder / "images" / f"{scene.scene_id}.png").write_bytes(data)
        truth_lines.append(
            json.dumps({"file": f"images/{scene.scene_id}.png", **scene.truth()}, sort_keys=True)
        )
        first_index = None
        for q in reference_questions(scene, rng):
            index = len(rows) + 1
            image_field = (
                base64.b64encode(data).decode("ascii") if first_index is None else str(first_index)
            )
            first_index = first_index or index
            options = q.options + [""] * (4 - len(q.options))
            rows.append(
                [
                    str(index),
                    image_field,
                    q.question,
                    "",
                    *options,
                    q.answer,
                    q.category,
                    q.l2_category,
                    "synthetic",
                    q.kind,
                    json.dumps(q.slots),
                    json.dumps(q.option_slots),
                ]
            )
    (folder / "truth.jsonl").write_text("\n".join(truth_lines) + "\n", encoding="utf-8")
    with open(folder / "questions.tsv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(TSV_COLUMNS + PART_COLUMNS)
        writer.writerows(rows)
    return {"scenes": len(scenes), "questions": len(rows)}


def load_truth(folder: Path) -> list[dict]:
    """The ground truth written by `write_corpus`, one dict per scene."""
    lines = (Path(folder) / "truth.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def noise_images(count: int, side: int, quality: int, seed: int = 0) -> Iterator[ImageRecord]:
    """`count` image records of random pixels (`side` x `side` JPEG at `quality`), one at a time,
    for the scale benches: what ingest would store for them, ids included."""
    import numpy as np

    from benchfoundry.core.ids import image_id

    rng = np.random.default_rng(seed)
    for n in range(1, count + 1):
        pixels = rng.integers(0, 255, size=(side, side, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="JPEG", quality=quality)
        data = buffer.getvalue()
        yield ImageRecord(
            image_id=image_id(data), source=f"bench/{n}.jpg", source_kind="folder", width=side,
            height=side, format="JPEG", mode="RGB", n_bytes=len(data), phash="0" * 16,
            duplicate_of=None, duplicate_distance=None, license="CC0-1.0", meta={}, bytes=data,
        )  # fmt: skip
