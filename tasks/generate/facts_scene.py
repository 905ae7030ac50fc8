"""The facts as a scene (`meaning.Scene`): what the generator writes its keys from. An image's
objects are those both readings agreed on, named by the describer's attributes (colour, shape
hint, place, a triangle ruled out) and the outline both readings name; how they meet and on
which side of one another they lie is read from their boxes, mask areas and hints
(`geometry`), with the margins the templates keep. A clip's actions are its annotated segments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchfoundry import meaning
from benchfoundry.core.records import Instance, OcrLine, SegmentRecord, VisualFactsRecord
from benchfoundry.extractors.agreement import shape_of
from benchfoundry.tasks.generate.geometry import extent, hint, relation, ruled_out

MARGIN = 3.0  # px of the framed image: a box this far past an edge lies plainly beyond it


class FactsScene:
    """One image's agreed objects and its lines read, in the generator's frame (`framed`)."""

    area_margin = 1.0

    def __init__(
        self,
        facts: VisualFactsRecord | None,
        objects: list[Instance],
        size: tuple[float, float] = (0.0, 0.0),
        agreed_lines: Sequence[OcrLine] = (),
    ) -> None:
        self.size = size
        self.instances = objects
        self._things = [
            meaning.Thing(
                i.attributes[0] if i.attributes else None,
                tuple(i.box),  # type: ignore[arg-type]
                float(i.mask_area),
                i.attributes[-1] if i.attributes else None,
                noun=shape_of(i),
                hint=hint(i),
                label=i.label or None,
                rules_out=ruled_out(i),
            )
            for i in objects
        ]
        lines = facts.ocr_lines if facts is not None else []
        # a line both engines read alike, as they read it (`agreement`: its words apart)
        alike = {tuple(t.box): t.text for t in agreed_lines}
        self._lines = [
            alike.get(tuple(t.box), t.text)
            for t in lines
            if sum(ch.isalnum() for ch in t.text) >= 2
        ]

    def instance(self, thing: meaning.Thing) -> Instance:
        return next(i for i, t in zip(self.instances, self._things, strict=True) if t is thing)

    def things(self, counted: bool = False) -> list[meaning.Thing]:  # noqa: ARG002
        return self._things

    def text_lines(self) -> list[str]:
        return self._lines

    def covers(self) -> Mapping[str, float]:
        return meaning.covered(self._things)

    def meets(self, a: meaning.Thing, b: meaning.Thing) -> str:
        return relation(self.instance(a), self.instance(b))

    def place(self, thing: meaning.Thing, reference: meaning.Thing, side: str) -> str:
        x0, y0, x1, y1 = extent(self.instance(thing), self.instances)
        r0, s0, r1, s1 = reference.box
        on, off = {
            "to the left of": (x1 + MARGIN <= r0, x0 >= r0),
            "to the right of": (r1 + MARGIN <= x0, x1 <= r1),
            "above": (y1 + MARGIN <= s0, y0 >= s0),
            "below": (s1 + MARGIN <= y0, y1 <= s1),
        }[side]
        return "on" if on else "off" if off else "across"

    def half(self, thing: meaning.Thing, axis: str) -> str | None:
        k = 0 if axis == "x" else 1
        reach = extent(self.instance(thing), self.instances)
        middle = self.size[k] / 2
        if reach[k + 2] <= middle - MARGIN:
            return "before"
        return "after" if reach[k] >= middle + MARGIN else None

    def steps(self) -> list[meaning.Step]:
        return []

    def window(self) -> tuple[float, float]:
        return (0.0, 0.0)


class SegmentsScene(meaning.StepsScene):
    """A clip's annotated segments, and the stretch a question shows."""

    def __init__(
        self, steps: Sequence[tuple[SegmentRecord, Mapping[str, str]]], start: float, end: float
    ) -> None:
        super().__init__([meaning.Step(s.start, s.end, slots) for s, slots in steps], start, end)
