"""What a template question is answered from: a scene. Three kinds of scene implement it: the
facts the generator writes its keys from, the evidence reader's own reading of the pixels, and a
bench's truth (the drawn objects, hand labels, a clip's drawn motions). Each answers the same
small questions with its own geometry; what a question means is written once, over them
(`meaning.answers`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Box = tuple[float, float, float, float]
Place = Literal["on", "off", "across"]
SIDES = ("to the left of", "to the right of", "above", "below")
OPPOSITE = {SIDES[0]: SIDES[1], SIDES[1]: SIDES[0], SIDES[2]: SIDES[3], SIDES[3]: SIDES[2]}
# The shapes a shape hint fits; the other shapes (a star, a hexagon, ...) fit none.
HINT_NOUNS = {
    "round": frozenset({"circle", "oval"}),
    "rectangular": frozenset({"square", "rectangle"}),
    "triangular": frozenset({"triangle"}),
}


@dataclass(frozen=True)
class Thing:
    """One object of a scene, as a question names it: its colour's name (None where people
    would name none), its box and area, its place among the nine of the image, its shape's
    name and hint where the scene knows them, a recogniser's label where one was given, for
    an object of no colour's name the names people might give it (`could_be`; None: any), and
    for one of unknown shape the hints its outline rules out (`rules_out`: a 7 px disc, which
    may as well be an octagon, is still no triangle)."""

    colour: str | None
    box: Box
    area: float
    position: str | None
    noun: str | None = None
    hint: str | None = None
    label: str | None = None
    could_be: frozenset[str] | None = None
    rules_out: frozenset[str] = frozenset()

    def fits_hint(self, hint: str) -> bool:
        """Whether the object could be called `hint` (round, rectangular, triangular): by its
        hint where the scene gave one, else by its shape's name; an object of unknown shape
        could be any but those its outline rules out."""
        if self.hint is not None:
            return self.hint == hint
        if self.noun is not None:
            return self.noun in HINT_NOUNS.get(hint, frozenset({hint}))
        return hint not in self.rules_out


@dataclass(frozen=True)
class Step:
    """One action a clip shows: when, and what it is as its parts (a template and the things it
    moves, or a verb and its noun)."""

    start: float
    end: float
    slots: Mapping[str, str]


class NoAnswer(Exception):
    """The scene gives the question no single answer (the description fits no object, objects
    of several answers, or lies across a line): the reason is the message."""


class Unsure(Exception):
    """The scene does not know what the question needs (a shape its outline does not name): no
    verdict either way."""


class Scene(Protocol):
    """What every kind of scene answers: an interface (the facts, the evidence reader's reading
    and a bench's truth implement it), its methods' bodies their docstrings."""

    size: tuple[float, float]
    area_margin: float  # how much more area the largest colour must cover for it to tell

    def things(self, counted: bool = False) -> Sequence[Thing]:
        """The objects; `counted` when the question counts them (NoAnswer where nobody can)."""

    def text_lines(self) -> Sequence[str]:
        """The lines of text written in the image."""

    def covers(self) -> Mapping[str, float]:
        """The area each colour covers in the image: its objects' (and its letters', which
        are pixels of their colour too)."""

    def meets(self, a: Thing, b: Thing) -> str:
        """How two objects meet: apart, touches, overlaps, contains (a holds b), inside or
        unclear."""

    def place(self, thing: Thing, reference: Thing, side: str) -> Place:
        """Where a thing lies to one side of another: wholly on it, wholly off it (no part past
        the reference's edge), or across its edge."""

    def half(self, thing: Thing, axis: str) -> str | None:
        """`before` (left, top) or `after` the image's middle line on `axis`; None across it."""

    def steps(self) -> Sequence[Step]:
        """A clip's actions in order (none for a picture)."""

    def window(self) -> tuple[float, float]:
        """The stretch of the clip the question shows."""


def covered(things: Sequence[Thing]) -> dict[str, float]:
    """The area each colour's things cover (a thing of no colour covers none): `covers` for a
    scene whose letters are not counted among its colours."""
    areas: dict[str, float] = {}
    for t in things:
        if t.colour:
            areas[t.colour] = areas.get(t.colour, 0.0) + t.area
    return areas


class StepsScene:
    """A clip's steps and the stretch of it a question shows: a scene of steps only (no objects,
    text or places), as the temporal kinds ask of it. The facts' segments and a bench's drawn
    clip truth are each one."""

    size = (0.0, 0.0)
    area_margin = 1.0

    def __init__(self, steps: Sequence[Step], start: float, end: float) -> None:
        self._steps = list(steps)
        self._window = (start, end)

    def things(self, counted: bool = False) -> list[Thing]:  # noqa: ARG002
        return []

    def text_lines(self) -> list[str]:
        return []

    def covers(self) -> Mapping[str, float]:
        return {}

    def meets(self, a: Thing, b: Thing) -> str:  # noqa: ARG002
        return "unclear"

    def place(self, thing: Thing, reference: Thing, side: str) -> str:  # noqa: ARG002
        return "across"

    def half(self, thing: Thing, axis: str) -> str | None:  # noqa: ARG002
        return None

    def steps(self) -> list[Step]:
        return self._steps

    def window(self) -> tuple[float, float]:
        return self._window
