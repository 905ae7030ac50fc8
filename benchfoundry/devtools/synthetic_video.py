"""Synthetic clips with known actions, for SEED-Bench's temporal dimensions offline.

Single-action clips in Something-Something-v2's form (`clips/<id>.mp4` and `clips/labels.json`
with `id`, `label`, `template`, `placeholders`: the label is the template with its
`[something]`s filled by the placeholders, in order), and multi-step procedures in the segments
form with EPIC-KITCHENS' verb and noun columns (`procedures/<name>.mp4` and
`procedures/segments.csv`: `video,start,end,label,verb,noun`): shapes that move, grow, shrink,
appear and disappear. Beside each folder's annotations, `drawn.jsonl` is the clip's truth as
the renderer drew it, not as the annotation words it: per video, each step's stretch, the thing
moved (its colour and shape) and its drawn state before and after (x, y in shares of the frame,
size, visible), and whether the box was drawn (`clip_truth` names the motion from them).
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from benchfoundry.core.video import encode_clip
from benchfoundry.devtools.scene_shapes import PALETTE, SHAPES

WIDTH, HEIGHT, FPS = 160, 120, 12
STEP_FRAMES = 18  # 1.5 s per action
# The scenes' palette (named as the describer names it) and shapes, five colours of it.
COLOURS = {name: PALETTE[name] for name in ("red", "blue", "green", "yellow", "purple")}
BOX = (112, 36, 152, 84)  # the box that things are put into and taken out of

# SSv2-style templates: template -> (start state, end state) of its object. A state is
# (x, y, size, visible): x and y in [0, 1] of the frame, size a factor of the base radius.
TEMPLATES: dict[str, tuple[tuple[float, float, float, bool], tuple[float, float, float, bool]]] = {
    "Moving [something] from left to right": ((0.2, 0.5, 1, True), (0.55, 0.5, 1, True)),
    "Moving [something] from right to left": ((0.55, 0.5, 1, True), (0.2, 0.5, 1, True)),
    "Moving [something] up": ((0.35, 0.78, 1, True), (0.35, 0.22, 1, True)),
    "Moving [something] down": ((0.35, 0.22, 1, True), (0.35, 0.78, 1, True)),
    "Putting [something] into [something]": ((0.2, 0.5, 0.8, True), (0.82, 0.5, 0.8, True)),
    "Taking [something] out of [something]": ((0.82, 0.5, 0.8, True), (0.2, 0.5, 0.8, True)),
    "Making [something] bigger": ((0.35, 0.5, 0.6, True), (0.35, 0.5, 1.5, True)),
    "Making [something] smaller": ((0.35, 0.5, 1.5, True), (0.35, 0.5, 0.6, True)),
}

THE_BOX = "the box"  # the second thing of the templates that put things into it and take them out
BOXED = {t for t in TEMPLATES if t.count("[something]") == 2}

# Procedure steps: the verb (as EPIC-KITCHENS' `verb` column would hold it), the narration it
# makes with its noun, and how it changes the object's state.
STEPS = {
    "move-right": ("move the {o} to the right", lambda s: (min(s[0] + 0.3, 0.85), *s[1:])),
    "move-left": ("move the {o} to the left", lambda s: (max(s[0] - 0.3, 0.15), *s[1:])),
    "lift-up": ("lift the {o} up", lambda s: (s[0], max(s[1] - 0.3, 0.2), s[2], s[3])),
    "put-down": ("put the {o} down", lambda s: (s[0], min(s[1] + 0.3, 0.8), s[2], s[3])),
    "make-bigger": ("make the {o} bigger", lambda s: (s[0], s[1], 1.5, s[3])),
    "make-smaller": ("make the {o} smaller", lambda s: (s[0], s[1], 0.6, s[3])),
}


@dataclass
class Thing:
    colour: str
    shape: str

    @property
    def name(self) -> str:
        return f"{self.colour} {self.shape}"


def _draw(draw: ImageDraw.ImageDraw, thing: Thing, state: tuple[float, float, float, bool]) -> None:
    x, y, size, visible = state
    if not visible:
        return
    r = 12 * size
    cx, cy = x * WIDTH, y * HEIGHT
    fill = COLOURS[thing.colour]
    if thing.shape == "circle":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    elif thing.shape == "square":
        draw.rectangle((cx - r, cy - r, cx + r, cy + r), fill=fill)
    else:
        draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fill)


def _frame(things: list[tuple[Thing, tuple]], box: bool) -> np.ndarray:
    image = Image.new("RGB", (WIDTH, HEIGHT), (245, 245, 240))
    draw = ImageDraw.Draw(image)
    if box:
        draw.rectangle(BOX, outline=(90, 60, 30), width=3)
    for thing, state in things:
        _draw(draw, thing, state)
    return np.asarray(image)


def _tween(a: tuple, b: tuple, t: float) -> tuple:
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t, b[3])


def _moves(start: tuple, end: tuple, frames: int) -> list[tuple]:
    """Hold, move, hold: the action happens in the middle of its stretch."""
    hold = frames // 6
    moving = frames - 2 * hold
    return (
        [start] * hold
        + [_tween(start, end, (i + 1) / moving) for i in range(moving)]
        + [end] * hold
    )


def single_action_clip(thing: Thing, template: str) -> bytes:
    start, end = TEMPLATES[template]
    box = template in BOXED
    return encode_clip([_frame([(thing, s)], box) for s in _moves(start, end, STEP_FRAMES)], FPS)


Step = tuple[float, float, str, str, str]  # start, end, label, verb, noun


def drawn_step(
    start: float, end: float, thing: Thing, before: tuple, after: tuple, box: bool
) -> dict:
    """One step as drawn: its stretch, the thing it moves, its states before and after."""
    return {"start": start, "end": end, "thing": {"colour": thing.colour, "shape": thing.shape},
            "from": list(before), "to": list(after), "box": box}  # fmt: skip


def procedure_clip(
    rng: random.Random, steps: int, drawn: list[dict] | None = None
) -> tuple[bytes, list[Step]]:
    """A clip of `steps` actions, each on one of two or three shapes, with its segments (and
    each step as drawn appended to `drawn`)."""
    things = [
        Thing(c, s)
        for c, s in zip(rng.sample(list(COLOURS), 3), rng.sample(SHAPES, 3), strict=True)
    ]
    states = {t.name: (0.25 + 0.25 * i, 0.5, 1.0, True) for i, t in enumerate(things)}
    frames: list[np.ndarray] = []
    segments: list[Step] = []
    used: set[str] = set()
    while len(segments) < steps:
        thing = rng.choice(things)
        verb = rng.choice(list(STEPS))
        phrase, change = STEPS[verb]
        label = phrase.format(o=thing.name)
        after = change(states[thing.name])
        if label in used or after == states[thing.name]:
            continue  # each step once, and every step visibly changes something
        used.add(label)
        start = len(frames) / FPS
        for state in _moves(states[thing.name], after, STEP_FRAMES):
            shown = [(t, state if t.name == thing.name else states[t.name]) for t in things]
            frames.append(_frame(shown, box=False))
        end = round(len(frames) / FPS, 3)
        if drawn is not None:
            drawn.append(drawn_step(round(start, 3), end, thing, states[thing.name], after, False))
        states[thing.name] = after
        segments.append((round(start, 3), end, label, verb, thing.name))
    return encode_clip(frames, FPS), segments


def write_clips(folder: Path, n_clips: int, n_procedures: int, seed: int = 0) -> dict[str, int]:
    """`folder/clips/` (SSv2 form) and `folder/procedures/` (segments form), with their labels."""
    rng = random.Random(seed)
    folder = Path(folder)
    counts = {"clips": 0, "procedures": 0, "segments": 0}
    if n_clips:
        (folder / "clips").mkdir(parents=True, exist_ok=True)
        entries, truth = [], []
        templates = list(TEMPLATES)
        for i in range(n_clips):
            thing = Thing(rng.choice(list(COLOURS)), rng.choice(SHAPES))
            template = (
                templates[i % len(templates)] if i < len(templates) else rng.choice(templates)
            )
            clip_id = str(1000 + i)
            (folder / "clips" / f"{clip_id}.mp4").write_bytes(single_action_clip(thing, template))
            placeholders = [thing.name] + ([THE_BOX] if template in BOXED else [])
            label = template
            for placeholder in placeholders:
                label = label.replace("[something]", placeholder, 1)
            entries.append(
                {"id": clip_id, "label": label, "template": template, "placeholders": placeholders}
            )
            start, end = TEMPLATES[template]
            step = drawn_step(0.0, STEP_FRAMES / FPS, thing, start, end, template in BOXED)
            truth.append({"video": f"{clip_id}.mp4", "steps": [step]})
        (folder / "clips" / "labels.json").write_text(json.dumps(entries, indent=1) + "\n")
        _write_drawn(folder / "clips" / "drawn.jsonl", truth)
        counts["clips"] = n_clips
    if n_procedures:
        (folder / "procedures").mkdir(parents=True, exist_ok=True)
        rows, truth = [], []
        for i in range(n_procedures):
            drawn: list[dict] = []
            data, segments = procedure_clip(rng, steps=3 + i % 2, drawn=drawn)
            name = f"procedure_{i:02d}.mp4"
            truth.append({"video": name, "steps": drawn})
            (folder / "procedures" / name).write_bytes(data)
            rows += [(name, f"{s:g}", f"{e:g}", *parts) for s, e, *parts in segments]
        with open(folder / "procedures" / "segments.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(["video", "start", "end", "label", "verb", "noun"])
            writer.writerows(rows)
        _write_drawn(folder / "procedures" / "drawn.jsonl", truth)
        counts["procedures"] = n_procedures
        counts["segments"] = len(rows)
    return counts


def _write_drawn(path: Path, videos: list[dict]) -> None:
    path.write_text("".join(json.dumps(v) + "\n" for v in videos), encoding="utf-8")
