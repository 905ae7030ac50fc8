"""Where the two readings of an image agree, and so what a template may state as a key
(DESIGN.md, "Trust"): the objects the segmenter found, each found again by the second
segmentation (same place, same colour; a shape name only where both outlines give the same
one), and the lines of text that both OCR engines read alike, as whole words.

Where they differ, nothing of that kind is asked, and the reason says why:
- `extractors_disagree`: the second reading found an object the first did not (a small dot
  under the first's size threshold, an outline, a stroke, a shape cut differently), missed one,
  saw another colour, or read a line differently;
- `word_fragment`: the line is part of a longer token (another reading runs on from its edge
  with no word space between, or one engine read more of it);
- `unclear_shapes`: an object standing free of the others has an outline that names no shape
  (two same-colour shapes run together, a blob): it may be several things, so nothing is counted
  (but a compact dot too few pixels across to name is one thing);
- `holds_objects`, `pattern`: an object holds two others or more (a traffic light's housing, a
  frame), or three objects or more meet in a chain (stripes or a pattern inside one outline):
  a person may count one thing or several, so nothing is counted;
- `no_second_reading`: the facts were made without a second reading of that kind."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
from benchfoundry.extractors.base import ANALYSIS_SIDE
from benchfoundry.extractors.colour_names import UNCLEAR_JOIN, clear
from benchfoundry.extractors.frame import image_area, image_box
from benchfoundry.extractors.objects import objects_of, unplain
from benchfoundry.extractors.shapes import HINT_OF, NOT_TRIANGULAR, SHAPE_NAMES

REASONS = {
    "extractors_disagree": "the two independent readings of the image (two segmentation methods, "
    "or two OCR engines) do not find the same thing, so neither is a key",
    "word_fragment": "the text read is part of a longer token (a reading runs on from its edge), "
    "not a whole word",
    "unclear_shapes": "an object's outline is no shape a person would name (shapes run together, "
    "a blob): it may be several things, so the objects are not counted",
    "no_second_reading": "the facts were made without a second reading to check the first "
    "(options.extract.second_segmenter / second_ocr is none)",
    "holds_objects": "an object holds two others or more (a housing with its lights, a frame): "
    "whether they are one thing or several has no one answer, so the objects are not counted",
    "pattern": "three objects or more meet one another (stripes or a pattern inside one outline, "
    "a mosaic): a person may see one thing, so the objects are not counted",
}
MATCH = 0.5  # boxes of the same object in the two readings overlap at least this much (IoU,
# each grown by `_coarse`)
# Boxes closer than this share of the image's longer side touch (an outline there may be
# bitten): 5 pixels of the frame the facts are measured in (`frame.framed`, 384 px across).
NEAR_SHARE = 5.0 / ANALYSIS_SIDE
NEAR = NEAR_SHARE * ANALYSIS_SIDE
WORD_GAP = 0.25  # readings on one row closer than this many line heights are one token


@dataclass(frozen=True)
class Agreement:
    """What both readings of one image support."""

    objects: list[Instance] = field(default_factory=list)  # the first reading's, confirmed
    objects_why_not: str | None = None  # why no template may ask about the objects
    counts_why_not: str | None = None  # why the objects may not be counted
    lines: list[OcrLine] = field(default_factory=list)  # read alike by both, whole words
    lines_why_not: str | None = None  # why no line is a key, where some was read


def agreement(facts: VisualFactsRecord) -> Agreement:
    objects, objects_why, counts_why = _objects(facts)
    lines, lines_why = _lines(facts)
    return Agreement(objects, objects_why, counts_why, lines, lines_why)


def _roles(facts: VisualFactsRecord) -> set[str]:
    return {info.role for info in facts.extractors}


def _iou(a: list[float], b: list[float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / max(1e-9, union)


def _coarse(a: Instance, b: Instance) -> float:
    """How far either box's edges may stray: one pixel of the image as given, in the frame the
    boxes are measured in, where the image was enlarged to it (a 96 px icon's pixel is four of
    the frame's, and a shape 7 px across may be read a pixel wider by one reading than by the
    other); nothing otherwise."""
    k = max((i.box[2] - i.box[0]) / max(1e-9, image_box(i)[2] - image_box(i)[0]) for i in (a, b))
    return k if k > 1 else 0.0


def _overlap(a: Instance, b: Instance) -> float:
    """How well two readings' boxes of one object agree: their IoU, each grown by `_coarse`;
    where the image was enlarged and no edge of one lies more than two of the image's own
    pixels from the other's, a full match (a 7 px triangle's enlarged edge is a blur two pixels
    wide, which one reading takes into the shape and the other leaves out)."""
    coarse = _coarse(a, b)
    if coarse and max(abs(p - q) for p, q in zip(a.box, b.box, strict=True)) <= 2 * coarse:
        return 1.0
    return _iou(_grown(a.box, coarse), _grown(b.box, coarse))


def _grown(box: list[float], by: float) -> list[float]:
    return [box[0] - by, box[1] - by, box[2] + by, box[3] + by]


def same_colour(a: str, b: str) -> bool:
    """Two readings' colour words for one object: the same name, or both unclear between names
    they share ("blue-green" and "green-cyan": neither reading may name it, and both say so)."""
    if a == b:
        return True
    split = [set(w.split(UNCLEAR_JOIN)) for w in (a, b)]
    return not clear(a) and not clear(b) and bool(split[0] & split[1])


def shape_of(instance: Instance) -> str | None:
    """The shape's name the describer gave (`shapes.shape_name`), if any."""
    return next((a for a in instance.attributes if a in SHAPE_NAMES), None)


def _unnamed(instance: Instance) -> Instance:
    """The instance without its shape's name and hint (the readings named it differently)."""
    name = shape_of(instance)
    drop = {name, HINT_OF.get(name or "")}
    return instance.model_copy(
        update={"attributes": [a for a in instance.attributes if a not in drop]}
    )


def _agreed(a: Instance, b: Instance) -> Instance:
    """The first reading's object as both readings see it: its shape's name where the second
    reading gives the same (else none), and `NOT_TRIANGULAR` where the second says so too."""
    agreed = a if shape_of(a) == shape_of(b) else _unnamed(a)
    if NOT_TRIANGULAR in agreed.attributes and NOT_TRIANGULAR not in b.attributes:
        attributes = [w for w in agreed.attributes if w != NOT_TRIANGULAR]
        agreed = agreed.model_copy(update={"attributes": attributes})
    return agreed


def _touching(a: Instance, b: Instance) -> bool:
    gap_x = max(a.box[0], b.box[0]) - min(a.box[2], b.box[2])
    gap_y = max(a.box[1], b.box[1]) - min(a.box[3], b.box[3])
    return max(gap_x, gap_y) < NEAR


def _objects(facts: VisualFactsRecord) -> tuple[list[Instance], str | None, str | None]:
    first = objects_of(facts)
    if not first:
        return [], None, None
    if why := unplain(first):
        return [], why, why
    if "second_segmenter" not in _roles(facts):
        return [], "no_second_reading", "no_second_reading"
    second = objects_of(facts.model_copy(update={"instances": facts.second_instances}))
    pairs = sorted(
        (
            (_overlap(a, b), i, j)
            for i, a in enumerate(first)
            for j, b in enumerate(second)
            if same_colour(a.attributes[0], b.attributes[0])
        ),
        reverse=True,
    )
    partner: dict[int, int] = {}
    taken: set[int] = set()
    for overlap, i, j in pairs:
        if overlap >= MATCH and i not in partner and j not in taken:
            partner[i] = j
            taken.add(j)
    if len(partner) != len(first) or len(taken) != len(second):
        return [], "extractors_disagree", "extractors_disagree"
    agreed = [_agreed(a, second[partner[i]]) for i, a in enumerate(first)]
    # An outline that names no shape may be several things run together; one that a reading
    # names (and the other reading, whose pixels of its edge differ, names nothing) is one
    # shape, though neither name may be used. Two different names are no shape.
    shapeless = [_shapeless(a, second[partner[i]]) for i, a in enumerate(first)]
    free_unnamed = any(  # (a recogniser's label says what it is: one thing)
        shapeless[i]
        and not a.label
        and not too_small_to_name(a)
        and not any(_touching(a, b) for b in agreed if b is not a)
        for i, a in enumerate(agreed)
    )
    if free_unnamed:
        return agreed, None, "unclear_shapes"
    return agreed, None, _uncountable(agreed)


# A shape fewer pixels across than this in the image as given has too few for its outline to
# say what it is (a 7 px circle and a 7 px octagon are the same pixels; at 14 px a circle's
# staircase still spreads its radius as much as an octagon's corners do), but a compact one is
# still one thing to a person: a dot in a 96 px icon, a 14 px disc in a 64 px one.
NAMEABLE_PX = 16
# a dot's box is near square and filled as a triangle's is (half of it, less a little the
# enlarged blur takes: a 7 px triangle measured 0.48), more than two round dots corner to
# corner fill theirs (0.39)
COMPACT_ASPECT, COMPACT_FILL = 1.3, 0.42


def too_small_to_name(instance: Instance) -> bool:
    """Whether an object names no shape only because it is too few of the image's own pixels
    across (`NAMEABLE_PX`), and is compact (`COMPACT_ASPECT`, `COMPACT_FILL`: not two dots side
    by side or two round dots corner to corner, whose box is long or mostly empty)."""
    x0, y0, x1, y1 = image_box(instance)
    w, h = max(1e-9, x1 - x0), max(1e-9, y1 - y0)
    compact = max(w, h) / min(w, h) <= COMPACT_ASPECT
    return max(w, h) < NAMEABLE_PX and compact and image_area(instance) >= COMPACT_FILL * w * h


def _shapeless(a: Instance, b: Instance) -> bool:
    """Whether one object's two readings leave its outline no shape (see `_objects`)."""
    return len({shape_of(a), shape_of(b)} - {None}) != 1


def _holds(outer: Instance, inner: Instance) -> bool:
    (ox0, oy0, ox1, oy1), (ix0, iy0, ix1, iy1) = outer.box, inner.box
    return ox0 <= ix0 and oy0 <= iy0 and ix1 <= ox1 and iy1 <= oy1


def _uncountable(objects: list[Instance]) -> str | None:
    """Why a person would not agree on how many objects there are: one holds two others or
    more (`holds_objects`), or three or more meet one another in a chain (`pattern`)."""
    if any(sum(_holds(o, i) for i in objects if i is not o) >= 2 for o in objects):
        return "holds_objects"
    group = {id(o): k for k, o in enumerate(objects)}  # each object's group, joined by touching
    for a in objects:
        for b in objects:
            if a is not b and _touching(a, b) and group[id(a)] != group[id(b)]:
                old, new = group[id(b)], group[id(a)]
                group = {key: new if g == old else g for key, g in group.items()}
    sizes = Counter(group.values())
    return "pattern" if sizes and max(sizes.values()) >= 3 else None


def _same_row(a: OcrLine, b: OcrLine) -> bool:
    overlap = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
    return overlap >= 0.5 * min(a.box[3] - a.box[1], b.box[3] - b.box[1])


def _plain(text: str) -> str:
    """A reading compared without case or spaces (one engine drops the spaces between words)."""
    return "".join(text.split()).casefold()


def _line_verdict(line: OcrLine, facts: VisualFactsRecord) -> str | None:
    """None where the second engine read this line alike and it is whole words; else why not."""
    height = line.box[3] - line.box[1]
    found = [s for s in facts.second_ocr_lines if _iou(line.box, s.box) >= 0.3]
    for other in [*facts.ocr_lines, *facts.second_ocr_lines]:
        if other is line or other in found or not _same_row(line, other):
            continue
        gap = max(line.box[0], other.box[0]) - min(line.box[2], other.box[2])
        if gap < WORD_GAP * height:  # another reading runs on from this one's edge
            return "word_fragment"
    texts = {_plain(s.text) for s in found}
    if _plain(line.text) in texts:
        return None
    if any(_plain(line.text) in t or t in _plain(line.text) for t in texts if t):
        return "word_fragment"
    return "extractors_disagree"


def _spaced(line: OcrLine, facts: VisualFactsRecord) -> OcrLine:
    """The line as the engines read it alike, with the spaces of the reading that breaks it into
    the most words: an engine drops the spaces between small words ("orange gardensummer" in a
    96 px copy, where the other engine read "orange garden summer"), it does not invent them."""
    alike = [
        s.text
        for s in facts.second_ocr_lines
        if _iou(line.box, s.box) >= 0.3 and _plain(s.text) == _plain(line.text)
    ]
    best = max([line.text, *alike], key=lambda text: len(text.split()))
    return line if best == line.text else line.model_copy(update={"text": best})


def _lines(facts: VisualFactsRecord) -> tuple[list[OcrLine], str | None]:
    if not facts.ocr_lines:
        return [], None
    if "second_ocr" not in _roles(facts):
        return [], "no_second_reading"
    verdicts = [
        (line, _line_verdict(line, facts))
        for line in facts.ocr_lines
        if sum(ch.isalnum() for ch in line.text) >= 2  # a lone mark is no reading to key
    ]
    agreed = [_spaced(line, facts) for line, why in verdicts if why is None]
    reasons = Counter(why for _, why in verdicts if why)
    return agreed, reasons.most_common(1)[0][0] if reasons and not agreed else None
