"""Field pictures with known truth: kinds of picture curators have that the bench did not draw
(issue 53). Off-palette colours (teal, navy, maroon, olive, beige), translucent shapes that
overlap, a traffic light (a housing holding three lights), a striped box, a flag, a slide (a
title over shapes), drop shadows, textured paper, cartoon shapes with black outlines, tilted and
hand-drawn shapes, and one drawing at 96 px, at its drawn size and at 6,000 px.

Each picture's truth is what a careful person answers, in the truth checkers' format
(`hard_shapes.scene_truth`): an object whose colour a person would not name plainly has colour
None and `could_be`, the basic names a person might give it; `countable: false` where people
would not agree on how many objects there are (three lights or a traffic light? one striped
box or its stripes?). `write_field_corpus` writes `images/*` and `truth.jsonl`."""

from __future__ import annotations

import io
import json
import math
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from benchfoundry.devtools.hard_drawings import (
    HEIGHT,
    RGB,
    WIDTH,
    Drawing,
    _light,
    _line,
    font,
    place,
    truth,
)
from benchfoundry.devtools.hard_shapes import (
    draw_object,
    make_object,
    scene_truth,
    size_word,
    truth_mask,
)

OFF_PALETTE = {  # the web's colours of these names, and what a person might call each
    "teal": ((0, 128, 128), ["blue", "green", "cyan"]),
    "navy": ((0, 0, 128), ["blue", "purple", "black"]),
    "maroon": ((128, 0, 0), ["red", "brown", "purple"]),
    "olive": ((128, 128, 0), ["green", "yellow", "brown"]),
    "beige": ((245, 245, 220), ["white", "yellow", "brown", "grey"]),
}
PLAIN = ("red", "green", "blue", "yellow", "orange", "purple")
SHAPES = ("circle", "square", "triangle", "hexagon", "star")


def _hesitant(obj: dict, could_be: list[str]) -> dict:
    return {**obj, "colour": None, "could_be": could_be}


def off_palette(rng: random.Random) -> Drawing:
    """Two or three shapes, one or two of them in a colour people hesitate to name."""
    taken: list[list[int]] = []
    names = rng.sample(sorted(OFF_PALETTE), rng.randint(1, 2))
    plain = rng.sample(PLAIN, rng.randint(1, 2))
    objects, fills = [], []
    for name in names:
        obj = place(rng, rng.choice(SHAPES), "red", rng.randint(24, 44), taken, margin=20)
        if obj:
            rgb, could_be = OFF_PALETTE[name]
            objects.append(_hesitant(obj, could_be))
            fills.append(rgb)
    for colour in plain:
        obj = place(rng, rng.choice(SHAPES), colour, rng.randint(24, 44), taken, margin=20)
        if obj:
            objects.append(obj)
            fills.append(RGB[colour])
    background = (250, 250, 250) if "beige" in names else _light(rng)
    return Drawing("off_palette", _draw(objects, fills, background), truth("off_palette", objects))


def _draw(
    objects: list[dict], fills: list[tuple[int, ...]], background: tuple[int, int, int]
) -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT), background)
    draw = ImageDraw.Draw(image)
    for obj, fill in zip(objects, fills, strict=True):
        draw_object(draw, obj, fill)  # type: ignore[arg-type]
    return image


def translucent(rng: random.Random) -> Drawing:
    """Two shapes drawn at half opacity that overlap (their overlap a third colour), perhaps an
    opaque shape apart. A person counts two shapes where they cross."""
    background = (250, 250, 250)
    cx, cy = WIDTH // 2 + rng.randint(-40, 40), HEIGHT // 2 + rng.randint(-20, 20)
    r = rng.randint(34, 50)
    d = rng.uniform(0.8, 1.3) * r
    shape = rng.choice(("circle", "square"))
    first, second = rng.sample(("red", "blue", "yellow", "green"), 2)
    a = make_object(shape, first, (cx - round(d / 2), cy), r)
    b = make_object(shape, second, (cx + round(d / 2), cy + rng.randint(-10, 10)), r)
    pixels = np.full((HEIGHT, WIDTH, 3), background, np.float32)
    for obj in (a, b):  # each at half opacity over what is below it
        mask = truth_mask(obj, WIDTH, HEIGHT)
        pixels[mask] = 0.5 * np.array(RGB[obj["colour"]], np.float32) + 0.5 * pixels[mask]
    image = Image.fromarray(pixels.round().astype(np.uint8))
    # half a paint over white is its light shade: light red is pink, the others have no plain name
    objects = [
        {**o, "colour": "pink"} if o["colour"] == "red" else _hesitant(o, [o["colour"]])
        for o in (a, b)
    ]
    taken = [a["box"], b["box"]]
    if rng.random() < 0.5:
        extra = place(rng, "triangle", "purple", rng.randint(18, 28), taken, margin=20)
        if extra:
            ImageDraw.Draw(image).polygon([tuple(p) for p in extra["points"]], fill=RGB["purple"])
            objects.append(extra)
    return Drawing("translucent", image, truth("translucent", objects))


def traffic_light(rng: random.Random) -> Drawing:
    """A dark housing holding three lights: three lights, four objects or one traffic light."""
    w, h = rng.randint(50, 70), rng.randint(140, 180)
    x0, y0 = rng.randint(40, WIDTH - w - 40), (HEIGHT - h) // 2 + rng.randint(-20, 20)
    housing = make_object("rectangle", "black", (x0 + w / 2, y0 + h / 2), w / 2, h / 2)
    r = round(w * 0.32)
    lights = [
        make_object("circle", colour, (x0 + w / 2, y0 + h * (k + 0.5) / 3), r)
        for k, colour in enumerate(("red", "yellow", "green"))
    ]
    objects = [housing, *lights]
    fills = [(40, 40, 40), RGB["red"], RGB["yellow"], RGB["green"]]
    image = _draw(objects, fills, _light(rng))
    return Drawing("traffic_light", image, truth("traffic_light", objects, countable=False))


def striped_box(rng: random.Random) -> Drawing:
    """A box with three stripes of one colour across it: one striped box, or its stripes?"""
    w, h = rng.randint(120, 180), rng.randint(80, 120)
    x0, y0 = rng.randint(20, WIDTH - w - 20), rng.randint(20, HEIGHT - h - 20)
    box_colour, stripe_colour = rng.sample(("red", "blue", "yellow", "green", "black"), 2)
    fill = RGB[box_colour]
    box = make_object("rectangle", box_colour, (x0 + w / 2, y0 + h / 2), w / 2, h / 2)
    stripes = []
    band = w / 7
    for k in (1, 3, 5):
        cx = x0 + band * (k + 0.5)
        stripes.append(make_object("rectangle", stripe_colour, (cx, y0 + h / 2), band / 2, h / 2))
    objects = [box, *stripes]
    image = _draw(objects, [fill] + [RGB[stripe_colour]] * 3, (235, 235, 235))
    return Drawing("striped_box", image, truth("striped_box", objects, countable=False))


def flag(rng: random.Random) -> Drawing:
    """A tricolour flag: three bands that meet (one flag, or three stripes?)."""
    colours = rng.sample(("red", "green", "blue", "yellow", "orange", "white", "black"), 3)
    w, h = rng.randint(150, 210), rng.randint(100, 130)
    x0, y0 = (WIDTH - w) // 2 + rng.randint(-30, 30), (HEIGHT - h) // 2
    bands = [
        make_object("rectangle", c, (x0 + w * (k + 0.5) / 3, y0 + h / 2), w / 6, h / 2)
        for k, c in enumerate(colours)
    ]
    image = _draw(bands, [RGB[c] for c in colours], (200, 210, 225))
    return Drawing("flag", image, truth("flag", bands, countable=False))


def slide(rng: random.Random) -> Drawing:
    """A title in black over two or three plain shapes, as on a presentation slide."""
    words = rng.choice(("Quarterly results", "Project plan", "Our team", "Next steps"))
    face = font(rng.randint(30, 38), bold=True)
    left, top, right, bottom = face.getbbox(words)
    x, y = 20, 14
    line = _line(words, [x + left, y + top, x + right, y + bottom], face, (x, y), "black")
    taken = [[x + left, y + top, x + right, y + bottom]]
    made = [
        place(rng, rng.choice(SHAPES), c, rng.randint(22, 36), taken, margin=20)
        for c in rng.sample(PLAIN, rng.randint(2, 3))
    ]
    objects = [o for o in made if o]
    image = _draw(objects, [RGB[o["colour"]] for o in objects], (252, 252, 252))
    ImageDraw.Draw(image).text((x, y), words, fill=(15, 15, 15), font=face)
    return Drawing("slide", image, truth("slide", objects, [line]))


def shadow(rng: random.Random) -> Drawing:
    """Shapes with a grey drop shadow: the shadow is no object."""
    taken: list[list[int]] = []
    made = [
        place(rng, rng.choice(("circle", "square")), c, rng.randint(26, 40), taken, margin=24)
        for c in rng.sample(PLAIN, rng.randint(1, 3))
    ]
    objects = [o for o in made if o]
    background = (245, 245, 245)
    image = Image.new("RGB", (WIDTH, HEIGHT), background)
    draw = ImageDraw.Draw(image)
    dx, dy = rng.randint(4, 8), rng.randint(4, 8)
    for obj in objects:
        moved = {**obj, "box": [obj["box"][0] + dx, obj["box"][1] + dy, obj["box"][2] + dx,
                                obj["box"][3] + dy]}  # fmt: skip
        draw_object(draw, moved, (170, 170, 170))
    for obj in objects:
        draw_object(draw, obj, RGB[obj["colour"]])
    return Drawing("shadow", image, truth("shadow", objects))


def textured(rng: random.Random) -> Drawing:
    """Plain shapes on textured paper (grain of a few levels, a faint fibre pattern)."""
    taken: list[list[int]] = []
    made = [
        place(rng, rng.choice(SHAPES), c, rng.randint(24, 42), taken, margin=18)
        for c in rng.sample(PLAIN, rng.randint(2, 3))
    ]
    objects = [o for o in made if o]
    noise = np.random.default_rng(rng.randint(0, 2**31)).normal(0, 6, (HEIGHT, WIDTH, 1))
    paper = np.clip(np.array([236, 230, 216]) + noise, 0, 255).astype(np.uint8)
    image = Image.fromarray(paper)
    draw = ImageDraw.Draw(image)
    for obj in objects:
        draw_object(draw, obj, RGB[obj["colour"]])
    return Drawing("textured", image, truth("textured", objects))


def cartoon(rng: random.Random) -> Drawing:
    """Filled shapes with a thick black outline, as a cartoon draws them."""
    taken: list[list[int]] = []
    made = [
        place(rng, rng.choice(("circle", "square", "triangle")), c, rng.randint(26, 42), taken,
              margin=20)
        for c in rng.sample(PLAIN, rng.randint(1, 3))
    ]  # fmt: skip
    objects = [o for o in made if o]
    image = Image.new("RGB", (WIDTH, HEIGHT), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    line = rng.randint(3, 5)
    for obj in objects:
        draw_object(draw, obj, RGB[obj["colour"]])
        draw_object(draw, {**obj, "style": "outline", "line": line}, (10, 10, 10))
    return Drawing("cartoon", image, truth("cartoon", objects))


def _turned(shape: str, colour: str, center: tuple[float, float], r: float, angle: float) -> dict:
    """A square, rectangle or triangle turned by `angle` radians, as a polygon object."""
    cx, cy = center
    if shape == "triangle":
        corners = [(0.0, -r), (r, r), (-r, r)]
    else:
        ry = r if shape == "square" else r * 0.55
        corners = [(-r, -ry), (r, -ry), (r, ry), (-r, ry)]
    c, s = math.cos(angle), math.sin(angle)
    points = [[round(cx + x * c - y * s, 2), round(cy + x * s + y * c, 2)] for x, y in corners]
    return _polygon(shape, colour, points, center)


def _polygon(shape: str, colour: str, points: list[list[float]], center: tuple) -> dict:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    box = [math.floor(min(xs)), math.floor(min(ys)), math.ceil(max(xs)), math.ceil(max(ys))]
    area = 0.5 * abs(sum(xs[i] * ys[i - 1] - xs[i - 1] * ys[i] for i in range(len(xs))))
    return {"shape": shape, "colour": colour, "style": "filled", "line": 0, "points": points,
            "box": box, "center": [round(center[0]), round(center[1])],
            "size": size_word(area, WIDTH, HEIGHT)}  # fmt: skip


def tilted(rng: random.Random) -> Drawing:
    """Squares, rectangles and triangles turned 10 to 35 degrees."""
    objects: list[dict] = []
    taken: list[list[int]] = []
    for colour in rng.sample(PLAIN, rng.randint(1, 3)):
        for _ in range(200):
            r = rng.randint(22, 36)
            center = (rng.uniform(2 * r, WIDTH - 2 * r), rng.uniform(2 * r, HEIGHT - 2 * r))
            obj = _turned(rng.choice(("square", "rectangle", "triangle")), colour, center, r,
                          math.radians(rng.uniform(10, 35)))  # fmt: skip
            if all(obj["box"][2] + 18 < b[0] or b[2] + 18 < obj["box"][0]
                   or obj["box"][3] + 18 < b[1] or b[3] + 18 < obj["box"][1] for b in taken):  # fmt: skip
                taken.append(obj["box"])
                objects.append(obj)
                break
    image = _draw(objects, [RGB[o["colour"]] for o in objects], _light(rng))
    return Drawing("tilted", image, truth("tilted", objects))


def hand_drawn(rng: random.Random) -> Drawing:
    """Circles and triangles drawn by hand: outlines that wobble by a few percent."""
    objects: list[dict] = []
    taken: list[list[int]] = []
    for colour in rng.sample(PLAIN, rng.randint(1, 3)):
        for _ in range(200):
            r = rng.randint(24, 40)
            cx, cy = rng.uniform(r + 14, WIDTH - r - 14), rng.uniform(r + 14, HEIGHT - r - 14)
            shape = rng.choice(("circle", "triangle"))
            n = 40 if shape == "circle" else 3
            phase = rng.uniform(0, 2 * math.pi)
            points = []
            for k in range(40):
                t = 2 * math.pi * k / 40
                if shape == "circle":
                    radius = r * (1 + 0.04 * math.sin(3 * t + phase) + rng.uniform(-0.015, 0.015))
                    points.append([round(cx + radius * math.cos(t), 2),
                                   round(cy + radius * math.sin(t), 2)])  # fmt: skip
            if shape == "triangle":
                corners = [(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
                for i in range(n):
                    (ax, ay), (bx, by) = corners[i], corners[(i + 1) % n]
                    for j in range(12):
                        u = j / 12
                        wobble = rng.uniform(-1.2, 1.2)
                        points.append([round(ax + (bx - ax) * u + wobble, 2),
                                       round(ay + (by - ay) * u + wobble, 2)])  # fmt: skip
            obj = _polygon(shape, colour, points, (cx, cy))
            if all(obj["box"][2] + 18 < b[0] or b[2] + 18 < obj["box"][0]
                   or obj["box"][3] + 18 < b[1] or b[3] + 18 < obj["box"][1] for b in taken):  # fmt: skip
                taken.append(obj["box"])
                objects.append(obj)
                break
    image = _draw(objects, [RGB[o["colour"]] for o in objects], _light(rng))
    return Drawing("hand_drawn", image, truth("hand_drawn", objects))


def _scaled(obj: dict, k: float) -> dict:
    out = {**obj, "center": [round(v * k) for v in obj["center"]]}
    out["box"] = [round(obj["box"][0] * k), round(obj["box"][1] * k),
                  round((obj["box"][2] + 1) * k) - 1, round((obj["box"][3] + 1) * k) - 1]  # fmt: skip
    if "points" in obj:
        out["points"] = [[round(x * k, 2), round(y * k, 2)] for x, y in obj["points"]]
    if obj.get("line"):
        out["line"] = max(1, round(obj["line"] * k))
    return out


def sizes(
    seed: int, sides: tuple[int, ...] = (96, WIDTH, 6000), shapes: tuple[str, ...] = SHAPES
) -> list[Drawing]:
    """One drawing of plain shapes at 96 px, at its drawn size (384 px) and at 6,000 px across:
    the same questions and keys are due on all three."""
    rng = random.Random(f"{seed}:sizes")
    taken: list[list[int]] = []
    made = [
        place(rng, rng.choice(shapes), c, rng.randint(30, 44), taken, margin=24)
        for c in rng.sample(PLAIN, 3)
    ]
    objects = [o for o in made if o]
    background = _light(rng)
    out = []
    for side in sides:
        k = side / WIDTH
        big = (round(WIDTH * max(k, 1)), round(HEIGHT * max(k, 1)))
        image = Image.new("RGB", big, background)
        draw = ImageDraw.Draw(image)
        for obj in objects:
            draw_object(draw, _scaled(obj, max(k, 1)), RGB[obj["colour"]])
        if k < 1:
            image = image.resize((side, round(HEIGHT * k)), Image.Resampling.LANCZOS)
        scene = [_scaled(o, k) for o in objects]
        found = scene_truth(f"size_{side}", image.width, image.height, scene, [])
        out.append(Drawing(f"size_{side}", image, found))
    return out


FAMILIES: dict[str, Callable[[random.Random], Drawing]] = {
    "off_palette": off_palette,
    "translucent": translucent,
    "traffic_light": traffic_light,
    "striped_box": striped_box,
    "flag": flag,
    "slide": slide,
    "shadow": shadow,
    "textured": textured,
    "cartoon": cartoon,
    "tilted": tilted,
    "hand_drawn": hand_drawn,
}


def make_pictures(seed: int = 0, per_family: int = 3) -> list[Drawing]:
    drawings = []
    for family, make in FAMILIES.items():
        rng = random.Random(f"{seed}:{family}")
        drawings += [make(rng) for _ in range(per_family)]
    return drawings + sizes(seed)


def write_field_corpus(folder: Path, seed: int = 0, per_family: int = 3) -> dict[str, int]:
    """Render the field pictures to `folder/images/` and their truth to `folder/truth.jsonl`."""
    images = Path(folder) / "images"
    images.mkdir(parents=True, exist_ok=True)
    lines, counts = [], {}
    for drawing in make_pictures(seed, per_family):
        n = counts[drawing.family] = counts.get(drawing.family, 0) + 1
        scene_id = f"{drawing.family}-{n:02d}"
        buffer = io.BytesIO()
        drawing.image.save(buffer, format="PNG", optimize=True)
        (images / f"{scene_id}.png").write_bytes(buffer.getvalue())
        lines.append({"file": f"images/{scene_id}.png", "scene_id": scene_id, **drawing.truth})
    text = "\n".join(json.dumps(line, sort_keys=True) for line in lines) + "\n"
    (Path(folder) / "truth.jsonl").write_text(text, encoding="utf-8")
    return counts
