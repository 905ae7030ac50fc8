"""Hard drawings with known truth: the inputs the template generator was not designed around.
Two overlapping circles of one colour (a person counts two), shapes of one colour that touch,
shapes beyond circle, square and triangle, a small dot beside a large shape, outlines, stripes,
a checkerboard, shapes on a gradient, JPEG-compressed and anti-aliased drawings, words and
logos (a word whose "o" is a graphic its letters touch), and pictures from installed packages
(`hard_packaged`). Each drawing's truth is what a careful person would answer, in the format
the truth checkers read; `countable: false` marks objects nobody can count (a texture, a logo)
and `objects_known: false` a photograph's (no object question about it has an answer).
`write_hard_corpus` writes `images/*` and `truth.jsonl` as `synthetic.write_corpus` does;
rendering is deterministic for a seed and a Pillow version."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from benchfoundry.devtools.hard_packaged import packaged_pictures
from benchfoundry.devtools.hard_shapes import (
    board_cells,
    draw_object,
    make_object,
    scene_truth,
    truth_mask,
)
from benchfoundry.devtools.scene_shapes import PALETTE, relations_between

WIDTH, HEIGHT = 384, 288
COLOURS = ("red", "green", "blue", "yellow", "orange", "purple", "black")
RGB = {**PALETTE, "white": (250, 250, 250)}
INK = (15, 15, 15)  # the colour of words
SUPERSAMPLE = 4
PLAIN = ("circle", "square", "triangle")
NEW_SHAPES = (
    "hexagon",
    "pentagon",
    "octagon",
    "star",
    "cross",
    "ring",
    "diamond",
    "oval",
    "rectangle",
)
LOGO_WORDS = ("robot", "photo", "cosmos", "window", "forest", "coffee", "violin", "motor")
TEXT_WORDS = ("apple", "river", "garden", "planet", "silver", "bridge", "market", "candle")


@dataclass
class Drawing:
    """One hard drawing: its family, pixels, truth and whether it is stored as JPEG."""

    family: str
    image: Image.Image
    truth: dict
    jpeg: bool = False


def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans from matplotlib's bundled fonts."""
    import matplotlib

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)


def _apart(box: list[int], boxes: list[list[int]], margin: int) -> bool:
    return all(
        box[2] + margin < b[0] or b[2] + margin < box[0] or box[3] + margin < b[1]
        or b[3] + margin < box[1]
        for b in boxes
    )  # fmt: skip


def place(
    rng: random.Random,
    shape: str,
    colour: str,
    rx: float,
    taken: list[list[int]],
    ry: float | None = None,
    style: str = "filled",
    line: int = 0,
    margin: int = 14,
) -> dict | None:
    """An object at a random place inside the image, `margin` px clear of the `taken` boxes
    (the new box is added to them); None when there is no room."""
    ry = rx if ry is None else ry
    for _ in range(300):
        cx = rng.uniform(rx + 10, WIDTH - rx - 10)
        cy = rng.uniform(ry + 10, HEIGHT - ry - 10)
        obj = make_object(shape, colour, (round(cx), round(cy)), rx, ry, style, line)
        if _apart(obj["box"], taken, margin):
            taken.append(obj["box"])
            return obj
    return None


def truth(family: str, objects: list[dict], lines: list[dict] | None = None, **more) -> dict:
    return scene_truth(family, WIDTH, HEIGHT, objects, lines or [], **more)


def render(
    objects: list[dict],
    background: tuple[int, int, int] | np.ndarray,
    lines: list[tuple[str, tuple[int, int], ImageFont.FreeTypeFont, tuple[int, int, int]]] = (),  # type: ignore[assignment]
    scale: int = 1,
) -> Image.Image:
    """Objects (in order, later on top), then words, on a plain colour or an RGB array; drawn
    `scale` times as large and scaled down when `scale` > 1 (anti-aliased)."""
    size = (WIDTH * scale, HEIGHT * scale)
    if isinstance(background, np.ndarray):
        image = Image.fromarray(background).resize(size, Image.Resampling.BILINEAR)
    else:
        image = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(image)
    for obj in objects:
        draw_object(draw, obj, RGB[obj["colour"]], scale)
    for text, (x, y), face, ink in lines:
        draw.text((x * scale, y * scale), text, fill=ink, font=face)
    if scale > 1:
        image = image.resize((WIDTH, HEIGHT), Image.Resampling.LANCZOS)
    return image


def _light(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(215, 250), rng.randint(215, 250), rng.randint(215, 250))


def _others(rng: random.Random, taken: list[list[int]], colours: list[str], n: int) -> list[dict]:
    """Up to `n` plain shapes of the given colours, placed apart from the rest."""
    made = [place(rng, rng.choice(PLAIN), c, rng.randint(16, 30), taken) for c in colours[:n]]
    return [o for o in made if o]


def overlap(rng: random.Random) -> Drawing:
    """Two circles of one colour that overlap (each still plainly a circle), perhaps a third
    shape of another colour apart from them."""
    colours = rng.sample(COLOURS, 2)
    r = rng.randint(28, 44)
    d = rng.uniform(1.05, 1.5) * r
    angle = rng.uniform(0, np.pi)
    cx, cy = WIDTH / 2 + rng.randint(-50, 50), HEIGHT / 2 + rng.randint(-30, 30)
    dx, dy = d / 2 * np.cos(angle), d / 2 * np.sin(angle)
    pair = [
        make_object("circle", colours[0], (round(cx - dx), round(cy - dy)), r),
        make_object("circle", colours[0], (round(cx + dx), round(cy + dy)), r),
    ]
    taken = [o["box"] for o in pair]
    objects = pair + _others(rng, taken, colours[1:], rng.randint(0, 1))
    return Drawing("overlap", render(objects, _light(rng)), truth("overlap", objects))


def touch(rng: random.Random) -> Drawing:
    """Two shapes of one colour that touch (squares along an edge, circles at a point),
    perhaps a third shape of another colour apart from them."""
    colours = rng.sample(COLOURS, 2)
    cx, cy = round(WIDTH / 2 + rng.randint(-50, 50)), round(HEIGHT / 2 + rng.randint(-30, 30))
    if rng.random() < 0.5:
        half = rng.randint(20, 34)
        a = make_object("square", colours[0], (cx - half, cy), half)
        b = make_object("square", colours[0], (cx + half + 1, cy + rng.randint(-half, half)), half)
    else:
        r1, r2 = rng.randint(22, 40), rng.randint(22, 40)
        angle = rng.uniform(0, np.pi)
        a = make_object("circle", colours[0], (cx, cy), r1)
        for step in range(40):  # move the second out until the two only touch
            d = r1 + r2 - 2 + step * 0.5
            at = (round(cx + d * np.cos(angle)), round(cy + d * np.sin(angle)))
            b = make_object("circle", colours[0], at, r2)
            masks = [truth_mask(o, WIDTH, HEIGHT) for o in (a, b)]
            if [r.relation for r in relations_between(masks)] == ["touches"]:
                break
    taken = [a["box"], b["box"]]
    objects = [a, b, *_others(rng, taken, colours[1:], rng.randint(0, 1))]
    return Drawing("touch", render(objects, _light(rng)), truth("touch", objects))


def _proportions(rng: random.Random, shape: str, r: int) -> tuple[float, float]:
    if shape in ("oval", "rectangle"):
        long, short = r, r * rng.uniform(0.45, 0.65)
        return (long, short) if rng.random() < 0.6 else (short, long)
    return r, r


def new_shape(shape: str) -> Callable[[random.Random], Drawing]:
    """A family: one shape beyond circle, square and triangle, with up to two plain shapes of
    other colours."""

    def make(rng: random.Random) -> Drawing:
        colours = rng.sample(COLOURS, 3)
        taken: list[list[int]] = []
        rx, ry = _proportions(rng, shape, rng.randint(28, 56))
        first = place(rng, shape, colours[0], rx, taken, ry)
        objects = [first] if first else []
        objects += _others(rng, taken, colours[1:], rng.randint(0, 2))
        return Drawing(shape, render(objects, _light(rng)), truth(shape, objects))

    return make


def dot(rng: random.Random) -> Drawing:
    """A large shape and a small dot (10-14 px across) beside it, usually of another colour."""
    colours = rng.sample(COLOURS, 2)
    if rng.random() < 0.3:
        colours[1] = colours[0]
    big = make_object(
        rng.choice(("circle", "square", "hexagon")),
        colours[0],
        (WIDTH // 2 + rng.randint(-40, 40), HEIGHT // 2 + rng.randint(-20, 20)),
        rng.randint(50, 70),
    )
    x0, y0, x1, y1 = big["box"]
    gap, r = rng.randint(10, 30), rng.choice((5, 6, 7))
    side = rng.choice(("left", "right", "above", "below"))
    mid = ((x0 + x1) // 2 + rng.randint(-20, 20), (y0 + y1) // 2 + rng.randint(-20, 20))
    at = {
        "left": (x0 - gap - r, mid[1]),
        "right": (x1 + gap + r, mid[1]),
        "above": (mid[0], y0 - gap - r),
        "below": (mid[0], y1 + gap + r),
    }[side]
    objects = [big, make_object("circle", colours[1], at, r)]
    return Drawing("dot", render(objects, _light(rng)), truth("dot", objects))


def outline(rng: random.Random) -> Drawing:
    """One to three shapes drawn as outlines (2-4 px), each a colour of its own."""
    colours = rng.sample(COLOURS, 3)
    taken: list[list[int]] = []
    line = rng.randint(2, 4)
    shapes = ("circle", "square", "triangle", "hexagon", "star")
    made = [
        place(rng, rng.choice(shapes), c, rng.randint(26, 50), taken, style="outline", line=line)
        for c in colours[: rng.randint(1, 3)]
    ]
    objects = [o for o in made if o]
    return Drawing("outline", render(objects, _light(rng)), truth("outline", objects))


def stripes(rng: random.Random) -> Drawing:
    """Four to seven parallel bars of one colour, close together (a person counts them)."""
    colour = rng.choice(COLOURS)
    n, width, gap = rng.randint(4, 7), rng.choice((8, 10, 12)), rng.randint(6, 10)
    length = rng.randint(80, 140)
    vertical = rng.random() < 0.5
    span = n * width + (n - 1) * gap
    start = (WIDTH - span) // 2 + rng.randint(-40, 40) if vertical else 0
    start_y = (HEIGHT - span) // 2 + rng.randint(-20, 20) if not vertical else 0
    across = HEIGHT // 2 + rng.randint(-20, 20) if vertical else WIDTH // 2 + rng.randint(-50, 50)
    objects = []
    for k in range(n):
        along = (start if vertical else start_y) + k * (width + gap) + width // 2
        center = (along, across) if vertical else (across, along)
        half = (width / 2, length / 2) if vertical else (length / 2, width / 2)
        objects.append(make_object("rectangle", colour, center, *half))
    return Drawing("stripes", render(objects, _light(rng)), truth("stripes", objects))


def checkerboard(rng: random.Random) -> Drawing:
    """A board of 3x3 to 6x6 squares of two colours: a texture, whose squares a person would
    not call a count of objects."""
    k, cell = rng.randint(3, 6), rng.randint(18, 30)
    if rng.random() < 0.5:
        first, second, background = "black", "white", (150, 150, 150)
    else:
        first, second = rng.sample(COLOURS[:6], 2)
        background = _light(rng)
    left = rng.randint(12, WIDTH - k * cell - 12)
    top = rng.randint(12, HEIGHT - k * cell - 12)
    objects = board_cells(left, top, cell, k, k, first, second)
    image = render(objects, background)
    return Drawing("checkerboard", image, truth("checkerboard", objects, countable=False))


def gradient_background(rng: random.Random) -> np.ndarray:
    """A linear gradient between a light colour and a mid one, across or down the image."""
    a = np.array(_light(rng), dtype=np.float32)
    b = np.array([rng.randint(80, 200) for _ in range(3)], dtype=np.float32)
    t = np.linspace(0, 1, WIDTH if rng.random() < 0.5 else HEIGHT, dtype=np.float32)
    ramp = a + (b - a) * t[:, None]
    if len(t) == WIDTH:
        return np.broadcast_to(ramp[None, :, :], (HEIGHT, WIDTH, 3)).astype(np.uint8)
    return np.broadcast_to(ramp[:, None, :], (HEIGHT, WIDTH, 3)).astype(np.uint8)


def _scatter(rng: random.Random, shapes: tuple[str, ...], low: int, high: int) -> list[dict]:
    """`low`-`high` filled shapes of distinct colours, apart from one another."""
    taken: list[list[int]] = []
    made = []
    for colour in rng.sample(COLOURS, rng.randint(low, high)):
        shape = rng.choice(shapes)
        rx, ry = _proportions(rng, shape, rng.randint(20, 44))
        made.append(place(rng, shape, colour, rx, taken, ry))
    return [o for o in made if o]


def gradient(rng: random.Random) -> Drawing:
    objects = _scatter(rng, PLAIN + NEW_SHAPES, 2, 4)
    image = render(objects, gradient_background(rng))
    return Drawing("gradient", image, truth("gradient", objects))


def jpeg(rng: random.Random) -> Drawing:
    """Shapes stored as JPEG at quality 60 (blocky edges, blotched flat colours)."""
    objects = _scatter(rng, PLAIN + NEW_SHAPES, 2, 4)
    return Drawing("jpeg", render(objects, _light(rng)), truth("jpeg", objects), jpeg=True)


def antialias(rng: random.Random) -> Drawing:
    """Shapes drawn four times as large and scaled down: soft edges of mixed colours."""
    objects = _scatter(rng, PLAIN + NEW_SHAPES, 1, 3)
    image = render(objects, _light(rng), scale=SUPERSAMPLE)
    return Drawing("antialias", image, truth("antialias", objects))


def _line(
    words: str, box: list[int], face: ImageFont.FreeTypeFont, at: tuple[int, int], colour: str
) -> dict:
    """A line's truth: its words, box, font size, colour name and how many pixels its letters
    cover (their share of the image's colours)."""
    canvas = Image.new("L", (WIDTH, HEIGHT), 0)
    ImageDraw.Draw(canvas).text(at, words, fill=255, font=face)
    ink = int((np.asarray(canvas) > 127).sum())
    return {"text": words, "box": box, "font_size": face.size, "colour": colour, "ink": ink}


def text(rng: random.Random) -> Drawing:
    """One or two lines of words in DejaVu Sans, perhaps a shape apart from them."""
    words = rng.sample(TEXT_WORDS, 4)
    taken: list[list[int]] = []
    drawn, lines = [], []
    y = rng.randint(14, 40)
    for index in range(rng.randint(1, 2)):
        phrase = " ".join(words[index * 2 : index * 2 + rng.randint(1, 2)])
        face = font(rng.randint(28, 52))
        left, top, right, bottom = face.getbbox(phrase)
        x = rng.randint(12, max(12, WIDTH - (right - left) - 12))
        box = [x + left, y + top, x + right, y + bottom]
        drawn.append((phrase, (x, y), face, INK))
        lines.append(_line(phrase, box, face, (x, y), "black"))
        taken.append(box)
        y = box[3] + rng.randint(20, 40)
    objects = [] if rng.random() < 0.5 else _others(rng, taken, rng.sample(COLOURS[:6], 1), 1)
    image = render(objects, _light(rng), drawn)
    return Drawing("text", image, truth("text", objects, lines))


def logo(rng: random.Random) -> Drawing:
    """A word in bold whose first "o" is a filled disc of another colour that its letters
    touch (as in matplotlib's logo), or a word in white on a coloured badge. A person reads
    the word; whether a logo is one object or several has no one answer."""
    word = rng.choice(LOGO_WORDS)
    face = font(rng.randint(56, 76), bold=True)
    ink, ink_name = rng.choice(((INK, "black"), ((17, 85, 124), "blue")))
    left, top, right, bottom = face.getbbox(word)
    pad = rng.randint(10, 18) if rng.random() < 0.35 else 0  # a badge's margin round the word
    x = rng.randint(10 + pad, max(10 + pad, WIDTH - right - 10 - pad))
    y = rng.randint(10 + pad, HEIGHT - bottom - 10 - pad)
    line = _line(word, [x + left, y + top, x + right, y + bottom], face, (x, y), ink_name)
    if pad:
        box, line["colour"] = line["box"], "white"
        colour = rng.choice(("red", "blue", "green", "purple", "black"))
        badge = make_object(
            "rectangle",
            colour,
            ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2),
            (box[2] - box[0]) / 2 + pad,
            (box[3] - box[1]) / 2 + pad,
        )
        image = render([badge], _light(rng), [(word, (x, y), face, (250, 250, 250))])
        return Drawing("logo", image, truth("logo", [badge], [line], countable=False))
    at = word.index("o")
    letters = [
        (word[:at], (x, y)),
        (word[at + 1 :], (x + round(face.getlength(word[: at + 1])), y)),
    ]
    inked = Image.new("L", (WIDTH, HEIGHT), 0)
    for part, where in letters:
        ImageDraw.Draw(inked).text(where, part, fill=255, font=face)
    ink_mask = np.asarray(inked) > 0
    line["ink"] = int((np.asarray(inked) > 127).sum())  # the letters drawn, the "o" not
    o_left, o_top, o_right, o_bottom = face.getbbox("o")
    ox = x + face.getlength(word[:at])
    cx, cy = ox + (o_left + o_right) / 2, y + (o_top + o_bottom) / 2
    r = (o_bottom - o_top) / 2
    colour = rng.choice(("orange", "red", "green", "yellow"))
    disc = make_object("circle", colour, (round(cx), round(cy)), r)
    while not (truth_mask(disc, WIDTH, HEIGHT) & _grown(ink_mask)).any():
        r += 1  # grow the disc until a letter touches it
        disc = make_object("circle", colour, (round(cx), round(cy)), r)
    drawn = [(part, where, face, ink) for part, where in letters if part]
    image = render([disc], _light(rng), drawn)
    return Drawing("logo", image, truth("logo", [disc], [line], countable=False))


def _grown(mask: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    return ndimage.binary_dilation(mask, iterations=1)


FAMILIES: dict[str, Callable[[random.Random], Drawing]] = {
    "overlap": overlap,
    "touch": touch,
    **{shape: new_shape(shape) for shape in NEW_SHAPES},
    "dot": dot,
    "outline": outline,
    "stripes": stripes,
    "checkerboard": checkerboard,
    "gradient": gradient,
    "jpeg": jpeg,
    "antialias": antialias,
    "text": text,
    "logo": logo,
}


def make_drawings(seed: int = 0, per_family: int = 3) -> list[Drawing]:
    """`per_family` drawings of each family, each family drawn from a generator of its own
    (so a family's drawings stay the same when another family changes)."""
    drawings = []
    for family, make in FAMILIES.items():
        rng = random.Random(f"{seed}:{family}")
        drawings += [make(rng) for _ in range(per_family)]
    return drawings


def write_hard_corpus(folder: Path, seed: int = 0, per_family: int = 3) -> dict[str, int]:
    """Render the hard drawings and copy the packaged pictures to `folder/images/`, their truth
    to `folder/truth.jsonl` (one line per image, `file` its path under `folder`)."""
    images = Path(folder) / "images"
    images.mkdir(parents=True, exist_ok=True)
    lines = []
    counts: dict[str, int] = {}
    for drawing in make_drawings(seed, per_family):
        n = counts[drawing.family] = counts.get(drawing.family, 0) + 1
        scene_id = f"{drawing.family}-{n:02d}"
        name = f"{scene_id}.{'jpg' if drawing.jpeg else 'png'}"
        buffer = io.BytesIO()
        if drawing.jpeg:
            drawing.image.save(buffer, format="JPEG", quality=60)
        else:
            drawing.image.save(buffer, format="PNG", optimize=True)
        (images / name).write_bytes(buffer.getvalue())
        lines.append({"file": f"images/{name}", "scene_id": scene_id, **drawing.truth})
    for name, data, picture in packaged_pictures():
        (images / name).write_bytes(data)
        counts[picture["family"]] = counts.get(picture["family"], 0) + 1
        lines.append({"file": f"images/{name}", "scene_id": name.rsplit(".", 1)[0], **picture})
    text = "\n".join(json.dumps(line, sort_keys=True) for line in lines) + "\n"
    (Path(folder) / "truth.jsonl").write_text(text, encoding="utf-8")
    return counts
