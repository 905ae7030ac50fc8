"""The evidence reader: quality control's own check of a template key. It answers a template
question from the question's parts (`slots`, `option_slots`: what the question asks and what
each option says, as data) through the kind's one meaning (`benchfoundry.meaning`), with its
own reading of the image's pixels as the scene (`evidence.reading.read_pixels`: its own colour
names, shape test and OCR engine), never from the facts that wrote the key, and abstains on
anything else (a question from a model, a seed, a clip's question, a kind it cannot read).

Its verdict is one of the "possibly flawed" flag's signals on a template item (`assess`): where
it reads something else than the key says (another count, no such object, two objects fitting
one description), the item is flagged with what it read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchfoundry import meaning
from benchfoundry.core.letters import index_of
from benchfoundry.core.records import CandidateRecord, ImageRecord
from benchfoundry.evidence.reading import Reading, read_pixels
from benchfoundry.storage.tables import RunFolder

# Kinds the reader does not answer: the clips' actions (it reads pictures), and contact (it does
# not judge how objects meet).
NOT_READ = {k for k, v in meaning.KINDS.items() if v.clip} | {"contain", "overlap", "touch"}
# Kinds whose options are printed text: where its OCR engine read lines but none of the options,
# it misread the line, which says nothing of the key (it abstains); where it read no text at
# all, it doubts the key (something is written, the key says; its engine sees no writing).
TEXT = {"read_text", "read_word"}
MIDDLE = 0.015  # a thing this share of the side or nearer to the middle may lie across it
MARGIN = 1.25  # the largest colour must cover this much more than the next for the reader


MEET = 0.01  # things whose boxes come this share of the picture's longer side apart meet


def _meet(a: meaning.Thing, b: meaning.Thing, gap: float) -> bool:
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.box, b.box
    return max(bx0 - ax1, ax0 - bx1, by0 - ay1, ay0 - by1) < gap


def _uncountable(things: Sequence[meaning.Thing], gap: float) -> str | None:
    """Why a person would not agree on how many things it reads, if so: three or more meeting
    one another in a chain (a flag's stripes, a striped box, a mosaic), or one holding two
    others or more (a traffic light's housing with its lights). Its own rule, on its own
    things: the key's readings apply one of their own before they count."""
    for outer in things:
        held = [
            t
            for t in things
            if t is not outer
            and outer.box[0] <= t.box[0]
            and outer.box[1] <= t.box[1]
            and t.box[2] <= outer.box[2]
            and t.box[3] <= outer.box[3]
        ]
        if len(held) >= 2:
            return "things people count differently: one holding two others or more (a housing)"
    group = list(range(len(things)))  # each thing's chain, joined where two meet
    for i, a in enumerate(things):
        for j, b in enumerate(things[:i]):
            if group[i] != group[j] and _meet(a, b, gap):
                old, new = group[i], group[j]
                group = [new if g == old else g for g in group]
    if any(group.count(g) >= 3 for g in set(group)):
        return "things people count differently: three or more meeting in a chain (stripes)"
    return None


@dataclass(frozen=True)
class Evidence:
    agrees: bool
    read: str  # what the reader read, in words


class ReadingScene:
    """The reader's reading as a scene (`meaning.Scene`): its things by their boxes as read."""

    area_margin = MARGIN

    def __init__(self, reading: Reading) -> None:
        self.size = (float(reading.size[0]), float(reading.size[1]))
        self._things = [
            meaning.Thing(t.colour, t.box, float(t.area), t.position, noun=t.noun)
            for t in reading.things
        ]
        self._lines = [line.text for line in reading.texts]
        self._count = reading.text_lines
        self._missing = reading.text_missing

    def things(self, counted: bool = False) -> list[meaning.Thing]:
        if counted and (why := _uncountable(self._things, MEET * max(self.size))):
            raise meaning.NoAnswer(why)
        return self._things

    def text_lines(self) -> list[str]:
        if self._missing:
            raise meaning.Unsure(f"no text was read: {self._missing}")
        return self._lines or ["?"] * self._count  # lines read, their words or not

    def covers(self) -> Mapping[str, float]:
        return meaning.covered(self._things)

    def meets(self, a: meaning.Thing, b: meaning.Thing) -> str:  # noqa: ARG002
        return "unclear"  # the reader does not judge contact

    def place(self, thing: meaning.Thing, reference: meaning.Thing, side: str) -> str:
        (x0, y0, x1, y1), (rx0, ry0, rx1, ry1) = thing.box, reference.box
        on, off = {
            "to the left of": (x1 <= rx0, x0 >= rx0),
            "to the right of": (x0 >= rx1, x1 <= rx1),
            "above": (y1 <= ry0, y0 >= ry0),
            "below": (y0 >= ry1, y1 <= ry1),
        }[side]
        return "on" if on else "off" if off else "across"

    def half(self, thing: meaning.Thing, axis: str) -> str | None:
        """Which half the thing lies in; None where it reaches `MIDDLE` of the side's length or
        nearer to the middle (a blur shaves a tip off what it reads, and a person hesitates)."""
        k = 0 if axis == "x" else 1
        middle, near = self.size[k] / 2, MIDDLE * self.size[k]
        if thing.box[k + 2] <= middle - near:
            return "before"
        return "after" if thing.box[k] >= middle + near else None

    def steps(self) -> list[meaning.Step]:
        return []

    def window(self) -> tuple[float, float]:
        return (0.0, 0.0)


def _said(read: meaning.Read) -> str:
    return ", ".join(
        f"{k} {' or '.join(sorted(v)) if isinstance(v, frozenset) else v}" for k, v in read.items()
    )


def check(candidate: CandidateRecord, reading: Reading) -> Evidence | None:
    """The reader's verdict on the candidate's key, or None where it abstains."""
    kind = candidate.generator.removeprefix("template:")
    option_slots = candidate.option_slots
    if kind not in meaning.KINDS or kind in NOT_READ or len(option_slots) != len(candidate.options):
        return None
    key = option_slots[index_of(candidate.answer)]
    try:
        read = meaning.answer(kind, ReadingScene(reading), candidate.slots)
    except meaning.Unsure:
        return None
    except meaning.NoAnswer as doubt:
        return Evidence(False, f"the question's description fits {doubt} in its reading")
    verdict = meaning.fits(kind, read, key)
    if verdict is None:
        return None  # what it read names no part the key names (a label, where it reads shapes)
    if verdict:
        return Evidence(True, f"reads {_said(read)}, as the key says")
    fitting = [chr(ord("A") + i) for i, o in enumerate(option_slots) if meaning.fits(kind, read, o)]
    if kind in TEXT and not fitting:
        if not reading.texts and not reading.text_lines:
            # Its engine, of another family than the key's, ran and found no writing anywhere
            # in the picture (a logo's lettering the key's engines cut short, "tlib" for
            # "matplotlib"): a reading that contradicts "this is written", not a misreading.
            return Evidence(False, f"reads no text anywhere, not the key's {_said(dict(key))}")
        return None  # it read lines, none of them an option: a misreading of its own
    where = f" (option {fitting[0]})" if fitting else " (no option says so)"
    return Evidence(False, f"reads {_said(read)}{where}, not the key's {_said(dict(key))}")


def _answered(candidate: CandidateRecord) -> bool:
    kind = candidate.generator.removeprefix("template:")
    return kind in meaning.KINDS and kind not in NOT_READ and not candidate.meta.get("video")


def readings(run: RunFolder, candidates: Sequence[CandidateRecord]) -> dict[str, Reading]:
    """The reader's reading of each picture that a template candidate the reader answers is
    about (each image read once); its own OCR engine reads the lines, whose letters are left
    out of its things."""
    import io

    from PIL import Image

    wanted = {c.image_id for c in candidates if _answered(c)}
    out: dict[str, Reading] = {}
    if not wanted:
        return out
    for batch in run.table(ImageRecord).batches(["image_id", "bytes"], batch_size=32):
        for image_id, data in zip(
            batch.column("image_id").to_pylist(), batch.column("bytes").to_pylist(), strict=True
        ):
            if image_id in wanted and image_id not in out:
                out[image_id] = read_pixels(Image.open(io.BytesIO(data)))
    return out


def evidence_for(run: RunFolder, candidates: Sequence[CandidateRecord]) -> dict[str, Evidence]:
    """The reader's verdicts on the template candidates of pictures, by question id (those it
    abstains on left out)."""
    read = readings(run, candidates)
    out = {}
    for c in candidates:
        if c.image_id in read and (verdict := check(c, read[c.image_id])) is not None:
            out[c.question_id] = verdict
    return out
