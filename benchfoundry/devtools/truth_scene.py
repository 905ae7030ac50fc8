"""A bench's truth as a scene (`meaning.Scene`): the objects a synthetic scene or a hard drawing
was drawn with (their shape, colour and box as drawn, their pixels drawn again from that truth),
the hand labels of a packaged picture, the lines of text it was written with. Where an object
lies is read from the drawing's own box, on a grid written here, not from the describer's code."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

import numpy as np

from benchfoundry import meaning
from benchfoundry.devtools.hard_shapes import truth_mask
from benchfoundry.devtools.scene_shapes import relations_between, visible

ROWS = ("top", "middle", "bottom")
COLUMNS = ("left", "center", "right")


def position(box: list[float] | tuple[float, ...], width: float, height: float) -> str:
    """The cell of a 3 x 3 grid that the box's centre falls in, as a person names it: "top
    left" ... "center" ... "bottom right" (the middle row's cells are "middle left", "center",
    "middle right"; a centre on a line between two cells is in the lower or righter one)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    row = ROWS[min(2, math.floor(3 * cy / height))]
    column = COLUMNS[min(2, math.floor(3 * cx / width))]
    if row == "middle":
        return "center" if column == "center" else f"middle {column}"
    return f"{row} {column}"


def area(obj: dict, width: int, height: int) -> float:
    """A synthetic scene's shape by its formula (as it always was); a hard drawing's object by
    its pixels (an outline by the region it encloses)."""
    if "style" in obj:
        return float(truth_mask(obj, width, height, ink=False).sum())
    half = (obj["box"][2] - obj["box"][0]) / 2
    return {
        "square": 4 * half * half,
        "circle": math.pi * half * half,
        "triangle": 2 * half * half,
    }[obj["shape"]]


class TruthScene:
    """One scene's truth (the dict `truth.jsonl` holds). An object drawn in a colour people
    hesitate to name (`colour` None) with the names they might give it (`could_be`) counts only
    for those names: asked of one of them, the truth is unknown (a person may count it or not);
    any other colour it is not, as drawn (a navy circle is no yellow object). Without `could_be`
    it could be any colour."""

    area_margin = 1.0

    def __init__(self, truth: dict) -> None:
        self.truth = truth
        self.width, self.height = truth["width"], truth["height"]
        self.size = (float(self.width), float(self.height))
        self.objects = truth.get("objects", [])
        self._things = [
            meaning.Thing(
                o.get("colour"),
                tuple(o["box"]),  # type: ignore[arg-type]
                area(o, self.width, self.height),
                position(o["box"], self.width, self.height),
                noun=o.get("shape"),
                label=o.get("label"),
                could_be=frozenset(o["could_be"])
                if o.get("colour") is None and "could_be" in o
                else None,
            )
            for o in self.objects
        ]
        self._relations: list | None = None

    def _masks(self, ink: bool) -> list[np.ndarray]:
        """Each object's pixels as drawn (`ink`), or the region it encloses."""
        return [truth_mask(o, self.width, self.height, ink) for o in self.objects]

    def _index(self, thing: meaning.Thing) -> int:
        return next(k for k, t in enumerate(self._things) if t is thing)

    def things(self, counted: bool = False) -> list[meaning.Thing]:
        if self.truth.get("objects_known") is False:
            raise meaning.NoAnswer("a photograph: its objects cannot be counted, named or located")
        if counted and self.truth.get("countable") is False:
            raise meaning.NoAnswer("the objects cannot be counted (a texture or a logo)")
        return self._things

    def objects_named(self) -> list[meaning.Thing]:
        """The objects, whatever can be asked of them (an option's object is one of these)."""
        return self._things

    def text_lines(self) -> list[str]:
        return [line["text"] for line in self.truth.get("text_lines", [])]

    def covers(self) -> Mapping[str, float]:
        """The pixels each colour shows: the objects' visible pixels and the letters'."""
        areas: Counter[str] = Counter()
        for thing, mask in zip(self.things(), visible(self._masks(ink=True)), strict=True):
            if thing.colour:
                areas[thing.colour] += int(mask.sum())
        for line in self.truth.get("text_lines", []):
            if "colour" in line:
                areas[line["colour"]] += line["ink"]
        return areas

    def meets(self, a: meaning.Thing, b: meaning.Thing) -> str:
        if self._relations is None:
            self._relations = relations_between(self._masks(ink=False))
        i, j = self._index(a), self._index(b)
        for r in self._relations:
            if {r.a, r.b} == {i, j}:
                return r.relation if r.relation != "contains" or r.a == i else "inside"
        return "apart"

    def place(self, thing: meaning.Thing, reference: meaning.Thing, side: str) -> str:
        (x0, y0, x1, y1), (r0, s0, r1, s1) = thing.box, reference.box
        on, off = {
            "to the left of": (x1 < r0, x0 >= r0 - 1),
            "to the right of": (x0 > r1, x1 <= r1 + 1),
            "above": (y1 < s0, y0 >= s0 - 1),
            "below": (y0 > s1, y1 <= s1 + 1),
        }[side]
        return "on" if on else "off" if off else "across"

    def half(self, thing: meaning.Thing, axis: str) -> str | None:
        k = 0 if axis == "x" else 1
        middle = self.size[k] / 2
        if thing.box[k + 2] + 1 <= middle:
            return "before"
        return "after" if thing.box[k] >= middle else None

    def steps(self) -> list[meaning.Step]:
        return []

    def window(self) -> tuple[float, float]:
        return (0.0, 0.0)
