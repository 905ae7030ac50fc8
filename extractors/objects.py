"""Which of an image's instances are objects a question may rest on, and whether they may be
counted, named or located at all. The generator asks only about these; the automatic reviewer
accepts a template question only when its image passes the same test.

Not objects: the glyphs of a line of text, the outline of another object. Not to be asked
about: an image among whose objects is a sliver (an edge cut into a strip a few pixels wide)
or an unlabeled region (neither labelled by a recogniser nor one flat colour: a part of a
photograph)."""

from __future__ import annotations

from collections import Counter

from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
from benchfoundry.extractors.blends import BLEND
from benchfoundry.extractors.colour_names import UNCLEAR_JOIN
from benchfoundry.extractors.describe import recognised


def _colour(instance: Instance) -> str | None:
    return instance.attributes[0] if instance.attributes else None


def _fill(instance: Instance) -> float:
    x0, y0, x1, y1 = instance.box
    return instance.mask_area / max(1.0, (x1 - x0) * (y1 - y0))


def outline(
    inst: Instance, instances: list[Instance], edge: float = 4.0, ink: float = 10.0
) -> bool:
    """A thin region hugging another region's box on every side: of its colour, the blurred
    edge of that object cut out as a region of its own; of any colour and around it (within
    `ink`), the line a cartoon draws round a filled shape. Not a second object."""

    def hugs(other: Instance) -> bool:
        pairs = list(zip(inst.box, other.box, strict=True))
        if _colour(other) == _colour(inst) and all(abs(p - q) <= edge for p, q in pairs):
            return True
        around = inst.box[0] <= other.box[0] and inst.box[1] <= other.box[1]
        around = around and other.box[2] <= inst.box[2] and other.box[3] <= inst.box[3]
        return around and all(abs(p - q) <= ink for p, q in pairs)

    return _fill(inst) < 0.3 and any(
        other is not inst and _fill(other) >= 0.3 and hugs(other) for other in instances
    )


def shadow(inst: Instance, instances: list[Instance], shift: float = 0.3) -> bool:
    """A grey or black region that peeks out from behind another object, as that object's copy
    pushed a little aside would (a drop shadow): it spans most of the other's box (half of it
    or more, at most 15% more, on each axis), lies within that box grown by `shift` of its size
    on every side, reaches out of it on some side, and shows under 40% of the other's area. A
    person sees no object there."""
    if not (_colour(inst) or "").startswith(("grey", "black")):
        return False
    x0, y0, x1, y1 = inst.box
    w, h = x1 - x0, y1 - y0
    for other in instances:
        ox0, oy0, ox1, oy1 = other.box
        ow, oh = ox1 - ox0, oy1 - oy0
        if other is inst or _colour(other) in ("grey", "black") or min(ow, oh) <= 0:
            continue
        spans = 0.5 * ow <= w <= 1.15 * ow and 0.5 * oh <= h <= 1.15 * oh
        near = x0 >= ox0 - shift * ow and x1 <= ox1 + shift * ow
        near = near and y0 >= oy0 - shift * oh and y1 <= oy1 + shift * oh
        out = max(ox0 - x0, oy0 - y0, x1 - ox1, y1 - oy1) >= 1
        if spans and near and out and inst.mask_area <= 0.4 * other.mask_area:
            return True
    return False


def sliver(inst: Instance, width: float = 3.0) -> bool:
    """A strip a few pixels across (an edge a segmenter cut out), not an object: its box's
    shorter side, or its mask's mean thickness across the box's longer side, under `width`."""
    x0, y0, x1, y1 = inst.box
    return min(x1 - x0, y1 - y0) < width or inst.mask_area / max(1.0, x1 - x0, y1 - y0) < width


def unplain(objects: list[Instance]) -> str | None:
    """Why an image's objects may not be counted, named or located: one is a sliver (the
    segmentation cut an edge into pieces), or one is an unlabeled region (neither labelled by a
    recogniser nor one flat colour: a part of a photograph); None when each is plainly one."""
    if any(sliver(i) for i in objects):
        return "slivers"
    if any(not recognised(i) for i in objects):
        return "unlabeled_regions"
    return None


def objects_of(facts: VisualFactsRecord) -> list[Instance]:
    """Instances that are objects: not the glyphs of a text line (an instance mostly inside an
    OCR line of two or more letters or digits; a shape that OCR misreads as one character is
    still an object), nor the outline of another object, nor the overlap of two translucent
    shapes (`blends`: its colour is theirs blended), nor a drop shadow (`shadow`)."""

    def glyph(inst: Instance, line: OcrLine) -> bool:
        x0, y0, x1, y1 = inst.box
        lx0, ly0, lx1, ly1 = line.box
        overlap = max(0.0, min(x1, lx1) - max(x0, lx0)) * max(0.0, min(y1, ly1) - max(y0, ly0))
        return overlap >= 0.5 * max(1.0, (x1 - x0) * (y1 - y0))

    lines = [line for line in facts.ocr_lines if sum(ch.isalnum() for ch in line.text) >= 2]
    return [
        i
        for i in facts.instances
        if len(i.attributes) >= 3
        and BLEND not in i.attributes
        and not shadow(i, facts.instances)
        and not any(glyph(i, line) for line in lines)
        and not outline(i, facts.instances)
    ]


def graphic_in_text(facts: VisualFactsRecord) -> bool:
    """Whether a line of text runs over a graphic: among the regions inside one OCR line (the
    regions `objects_of` leaves out as glyphs), one that reaches out of the line's box or covers
    most of it (a plate or badge behind the words), or one of another colour than the line's
    letters and about as tall as the line (a logo's disc in place of a letter, a picture
    between words). A shade that shares a name with the letters' colour ("black-grey" among
    black letters, as JPEG leaves a letter) is the letters' own; where two colours are equally
    common among the regions, either may be the letters'.
    What such an image "contains" (objects, text or both) has no plain answer."""
    lines = [line for line in facts.ocr_lines if sum(ch.isalnum() for ch in line.text) >= 2]
    for line in lines:
        lx0, ly0, lx1, ly1 = line.box
        inside = [
            i
            for i in facts.instances
            if i.attributes
            and max(0.0, min(i.box[2], lx1) - max(i.box[0], lx0))
            * max(0.0, min(i.box[3], ly1) - max(i.box[1], ly0))
            >= 0.5 * max(1.0, (i.box[2] - i.box[0]) * (i.box[3] - i.box[1]))
        ]
        reach, area = 0.15 * (ly1 - ly0), (lx1 - lx0) * (ly1 - ly0)
        if any(i.mask_area >= 0.6 * area for i in inside):  # a plate the letters are cut from
            return True
        if any(  # a plate behind the text: it reaches out of the line's box
            i.box[0] < lx0 - reach or i.box[1] < ly0 - reach or i.box[2] > lx1 + reach
            or i.box[3] > ly1 + reach
            for i in inside
        ):  # fmt: skip
            return True
        colours = Counter(_colour(i) for i in inside)
        if len(colours) < 2:
            continue
        # the letters' colour is the commonest; two equally common may either be theirs (an
        # "o" read with its paper-coloured inside beside the other letters, one region each)
        most = colours.most_common(1)[0][1]
        letters = [set((c or "").split(UNCLEAR_JOIN)) for c, n in colours.items() if n == most]
        if any(
            all(not words & set((_colour(i) or "").split(UNCLEAR_JOIN)) for words in letters)
            and (i.box[3] - i.box[1]) >= 0.5 * (ly1 - ly0)
            for i in inside
        ):
            return True
    return False
