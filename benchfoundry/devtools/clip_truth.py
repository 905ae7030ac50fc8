"""A synthetic clip's truth from what its renderer drew (`drawn.jsonl`, written beside the
annotations by `synthetic_video.write_clips`), not from the annotation files the generator read:
each step's motion is named from the thing's drawn states (which way it moved, whether it grew
or shrank, whether it ended in or left the box), then written in the parts an annotation set
uses (an SSv2 template and its things, or a verb and its noun), which is what the options say."""

from __future__ import annotations

import json
from pathlib import Path

from benchfoundry import meaning
from benchfoundry.devtools.synthetic_video import BOX, HEIGHT, THE_BOX, WIDTH
from benchfoundry.meaning.parts import listed

TOLERANCE = 0.05  # s: less than a frame at the clips' 12 frames a second
# A motion in the words of each annotation set (written from the motion, not from the labels)
TEMPLATE_OF = {
    "right": "Moving [something] from left to right",
    "left": "Moving [something] from right to left",
    "up": "Moving [something] up",
    "down": "Moving [something] down",
    "bigger": "Making [something] bigger",
    "smaller": "Making [something] smaller",
    "into": "Putting [something] into [something]",
    "out of": "Taking [something] out of [something]",
}
VERB_OF = {
    "right": "move-right",
    "left": "move-left",
    "up": "lift-up",
    "down": "put-down",
    "bigger": "make-bigger",
    "smaller": "make-smaller",
}


def _in_box(x: float, y: float) -> bool:
    return BOX[0] <= x * WIDTH <= BOX[2] and BOX[1] <= y * HEIGHT <= BOX[3]


def motion(step: dict) -> str:
    """What the drawn states show: into or out of the box, bigger or smaller, or the way the
    thing moved (the image's y grows downwards)."""
    (x0, y0, s0, _), (x1, y1, s1, _) = step["from"], step["to"]
    if step.get("box") and _in_box(x1, y1) and not _in_box(x0, y0):
        return "into"
    if step.get("box") and _in_box(x0, y0) and not _in_box(x1, y1):
        return "out of"
    if abs(x1 - x0) < 1e-6 and abs(y1 - y0) < 1e-6:
        return "bigger" if s1 > s0 else "smaller"
    if abs(x1 - x0) >= abs(y1 - y0):
        return "right" if x1 > x0 else "left"
    return "up" if y1 < y0 else "down"


def step_slots(step: dict, form: str) -> dict[str, str]:
    """The step's action as the parts of `form` (`ssv2`: template and things; else a verb and
    its noun)."""
    thing = f"{step['thing']['colour']} {step['thing']['shape']}"
    moved = motion(step)
    if form == "ssv2":
        things = [thing, THE_BOX] if moved in ("into", "out of") else [thing]
        return {"template": TEMPLATE_OF[moved], "placeholders": listed(things)}
    return {"verb": VERB_OF[moved], "action_noun": thing}


def load_drawn(folder: Path, form: str) -> dict[str, list[meaning.Step]]:
    """Video file name -> its steps as drawn, from `folder/drawn.jsonl`."""
    out: dict[str, list[meaning.Step]] = {}
    path = Path(folder) / "drawn.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        video = json.loads(line)
        out[video["video"]] = [
            meaning.Step(s["start"], s["end"], step_slots(s, form)) for s in video["steps"]
        ]
    return out


class ClipTruthScene(meaning.StepsScene):
    """A clip's drawn steps, and the stretch of it a question shows."""
