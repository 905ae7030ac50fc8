"""The evidence reader: quality control's own check of a template key. It answers a template
question from the question's parts (`slots`, `option_slots`: what the question asks and what
each option says, as data) and its own reading of the image's pixels
(`extractors.evidence.read_pixels`), never from the facts that wrote the key, and abstains on
anything else (a question from a model, a seed, a reading or a clip's question).

Its verdict decides the "possibly flawed" flag of a template item (`assess.judge_vlm`): where
it reads what the key says, the fact readers' disagreement alone does not flag the item; where it
reads something else (another count, no such object, two objects fitting one description), the
item is flagged with what it read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchfoundry.core.letters import index_of
from benchfoundry.core.records import CandidateRecord, ImageRecord
from benchfoundry.evidence.reading import Reading, Thing, read_pixels
from benchfoundry.storage.tables import RunFolder
from benchfoundry.storage.visual_context import current_facts

HINT_NOUNS = {
    "round": {"circle", "oval"},
    "rectangular": {"square", "rectangle"},
    "triangular": {"triangle"},
}


@dataclass(frozen=True)
class Evidence:
    agrees: bool
    read: str  # what the reader read, in words


class Unsure(Exception):
    """The reader cannot tell (no such kind, a part it does not read): it abstains."""


def _match(things: Sequence[Thing], colour: str = "", shape: str = "", where: str = "") -> list:
    return [
        t
        for t in things
        if (not colour or t.colour == colour)
        and (not shape or t.noun is None or t.noun in HINT_NOUNS.get(shape, {shape}))
        and (not where or t.position == where)
    ]


def _one(found: list[Thing], what: str) -> Thing:
    if len(found) != 1:
        raise _Doubt(f"{len(found)} {what}" if found else f"no {what}")
    return found[0]


class _Doubt(Exception):
    """What the reader read makes the question's description fit no thing or several."""


def _beside(a: Thing, b: Thing) -> str | None:
    """How `a` lies to `b`: the one relation that holds plainly, or None."""
    gap_x = max(a.box[0], b.box[0]) - min(a.box[2], b.box[2])
    gap_y = max(a.box[1], b.box[1]) - min(a.box[3], b.box[3])
    if gap_x > 0 and gap_y < 0:
        return "to the left of" if a.box[2] <= b.box[0] else "to the right of"
    if gap_y > 0 and gap_x < 0:
        return "above" if a.box[3] <= b.box[1] else "below"
    return None


def _wholly(thing: Thing, reference: Thing, side: str) -> bool:
    (x0, y0, x1, y1), (rx0, ry0, rx1, ry1) = thing.box, reference.box
    return {
        "to the left of": x1 <= rx0,
        "to the right of": x0 >= rx1,
        "above": y1 <= ry0,
        "below": y0 >= ry1,
    }[side]


def _count(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    return {"number": str(len(_match(things, s.get("colour", ""))))}


def _position(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    thing = _one(_match(things, s.get("colour", ""), s.get("shape", "")), "such objects")
    return {"position": thing.position}


def _colour(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    where = s.get("position", "")
    return {"colour": _one(_match(things, "", s.get("shape", ""), where), "objects there").colour}


def _identity(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    thing = _one(_match(things, s.get("colour", ""), "", s.get("position", "")), "objects there")
    if thing.noun is None:
        raise Unsure("its outline names no shape")
    return {"noun": thing.noun}


def _size(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    ranked = sorted(things, key=lambda t: t.area, reverse=s.get("extreme") == "largest")
    if len(ranked) < 2:
        raise _Doubt(f"{len(ranked)} objects")
    return {"object": ranked[0].colour}


def _relation(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    a = _one(_match(things, s.get("object", "")), f"{s.get('object')} objects")
    b = _one(_match(things, s.get("other", "")), f"{s.get('other')} objects")
    relation = _beside(a, b)
    if relation is None:
        raise _Doubt("no single plain relation between them")
    return {"relation": relation}


def _compare(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    n, m = len(_match(things, s["object"])), len(_match(things, s["other"]))
    return {"fixed": "as_many"} if n == m else {"fixed": "more", "colour": s[
        "object" if n > m else "other"
    ]}  # fmt: skip


def _remove(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    return {"number": str(len(things) - len(_match(things, s.get("colour", ""))))}


def _count_beside(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    reference = _one(_match(things, s.get("object", "")), f"{s.get('object')} objects")
    side = s["side"]
    return {"number": str(sum(_wholly(t, reference, side) for t in things if t is not reference))}


def _which(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:
    reference = _one(_match(things, s.get("object", "")), f"{s.get('object')} objects")
    on_side = [t for t in things if t is not reference and _wholly(t, reference, s["side"])]
    return {"object": _one(on_side, f"objects {s['side']} it").colour}


def _most_common(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:  # noqa: ARG001
    ranked = Counter(t.colour for t in things).most_common()
    if not ranked or len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        raise _Doubt("no one most common colour")
    return {"colour": ranked[0][0]}


def _dominant(things: Sequence[Thing], s: dict[str, str]) -> dict[str, str]:  # noqa: ARG001
    areas: Counter[str] = Counter()
    for t in things:
        areas[t.colour] += t.area
    ranked = areas.most_common()
    if not ranked or len(ranked) > 1 and ranked[1][1] >= 0.8 * ranked[0][1]:
        raise _Doubt("no colour plainly covers the most")
    return {"colour": ranked[0][0]}


def _layout(reading: Reading, s: dict[str, str]) -> dict[str, str]:
    k = 0 if s.get("axis") == "x" else 1
    middle = reading.size[k] / 2
    before = [t.box[k + 2] <= middle for t in reading.things]
    after = [t.box[k] >= middle for t in reading.things]
    if len(reading.things) < 2 or not all(b or a for b, a in zip(before, after, strict=True)):
        raise _Doubt("objects across the middle")
    names = ("left_only", "right_only", "both_sides") if k == 0 else (
        "top_only", "bottom_only", "both_halves"
    )  # fmt: skip
    return {"fixed": names[0] if all(before) else names[1] if all(after) else names[2]}


def _contents(reading: Reading, s: dict[str, str]) -> dict[str, str]:  # noqa: ARG001
    things = reading.things
    if reading.text_lines:
        return {"fixed": "objects_and_text" if things else "text_no_objects"}
    if not things:
        raise _Doubt("no object and no text")
    return {"fixed": "one_object_no_text" if len(things) == 1 else "several_objects_no_text"}


WHOLE = {"layout": _layout, "scene_content": _contents}  # answered from the whole reading
ANSWERS: dict[str, Callable[[Sequence[Thing], dict[str, str]], dict[str, str]]] = {
    "count": _count,
    "position": _position,
    "colour": _colour,
    "identity": _identity,
    "size": _size,
    "relative_position": _relation,
    "compare_counts": _compare,
    "remove_and_count": _remove,
    "count_beside": _count_beside,
    "which_object": _which,
    "most_common_colour": _most_common,
    "dominant_colour": _dominant,
}


def _fits(read: dict[str, str], option: dict[str, str]) -> bool:
    """Whether an option says what was read (each part the reading names, alike)."""
    return all(option.get(k) == v for k, v in read.items())


def _said(read: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in read.items())


def check(candidate: CandidateRecord, reading: Reading) -> Evidence | None:
    """The reader's verdict on the candidate's key, or None where it abstains."""
    kind = candidate.generator.removeprefix("template:")
    slots, option_slots = candidate.slots, candidate.option_slots
    if kind not in ANSWERS and kind not in WHOLE or len(option_slots) != len(candidate.options):
        return None
    key = option_slots[index_of(candidate.answer)]
    try:
        read = (
            WHOLE[kind](reading, slots) if kind in WHOLE else ANSWERS[kind](reading.things, slots)
        )
    except Unsure:
        return None
    except _Doubt as doubt:
        return Evidence(False, f"the question's description fits {doubt} in its reading")
    if _fits(read, key):
        return Evidence(True, f"reads {_said(read)}, as the key says")
    fitting = [chr(ord("A") + i) for i, o in enumerate(option_slots) if _fits(read, o)]
    where = f" (option {fitting[0]})" if fitting else " (no option says so)"
    return Evidence(False, f"reads {_said(read)}{where}, not the key's {_said(key)}")


def readings(run: RunFolder, candidates: Sequence[CandidateRecord]) -> dict[str, Reading]:
    """The reader's reading of each picture that a template candidate the reader answers is
    about (each image read once), without the letters of the lines OCR read there."""
    import io

    from PIL import Image

    wanted = {
        c.image_id
        for c in candidates
        if c.generator.removeprefix("template:") in {*ANSWERS, *WHOLE} and not c.meta.get("video")
    }
    out: dict[str, Reading] = {}
    if not wanted:
        return out
    for batch in run.table(ImageRecord).batches(["image_id", "bytes"], batch_size=32):
        for image_id, data in zip(
            batch.column("image_id").to_pylist(), batch.column("bytes").to_pylist(), strict=True
        ):
            if image_id in wanted and image_id not in out:
                out[image_id] = read_pixels(Image.open(io.BytesIO(data)))
    facts = current_facts(run)
    for image_id, reading in out.items():
        lines = [
            line.box
            for line in getattr(facts.get(image_id), "ocr_lines", [])
            if sum(ch.isalnum() for ch in line.text) >= 2
        ]
        out[image_id] = reading.without(lines)
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
