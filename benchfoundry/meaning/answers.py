"""How a scene answers each template kind: `answer(scene, slots) -> read`, what the right option
says (its slots; a set of values where any of them is true, as an oval is also what a circle
is), and `fits(read, option)`, whether an option says it. Written once, for every scene."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from benchfoundry.meaning.parts import listed_steps, steps
from benchfoundry.meaning.scene import OPPOSITE, NoAnswer, Scene, Thing, Unsure

Slots = Mapping[str, str]
Read = dict[str, str | frozenset[str]]
# What else a shape is: a circle is an oval too, a square a rectangle.
ALSO = {"circle": frozenset({"circle", "oval"}), "square": frozenset({"square", "rectangle"})}


def fits(read: Read, option: Slots) -> bool | None:
    """Whether an option says what was read: every part both name, alike (a set: any of it);
    None when they name no part in common (a label where a shape was read)."""
    shared = [k for k in read if k in option]
    if not shared:
        return None
    return all(_says(read[k], option[k]) for k in shared)


def _says(value: str | frozenset[str], said: str) -> bool:
    return said in value if isinstance(value, frozenset) else said == value


def matching(things: Sequence[Thing], colour: str = "", hint: str = "", where: str = "") -> list:
    """The things a description fits. A thing whose colour or place the scene does not know
    could be any colour or anywhere: where that is asked, the scene cannot tell (`Unsure`).
    A thing of no colour's name whose `could_be` lists the names people might give it is
    unknown only for those names; any other colour it is not (a navy circle is no yellow one)."""
    shaped = [t for t in things if not hint or t.fits_hint(hint)]
    if colour and any(
        t.colour is None and (t.could_be is None or colour in t.could_be) for t in shaped
    ):
        raise Unsure("the colour of a thing the description could fit is not known")
    found = [t for t in shaped if not colour or t.colour == colour]
    if where and any(t.position is None for t in found):
        raise Unsure("the place of a thing the description fits is not known")
    return [t for t in found if not where or t.position == where]


def shared(values: list, what: str) -> str:
    """The one value all the things a description fits share (two red circles at the centre
    are at the centre, whichever "the object" means)."""
    if not values:
        raise NoAnswer(f"no {what}")
    if None in values:
        raise Unsure(f"the scene does not name what the question asks of the {what}")
    if len(set(values)) > 1:
        raise NoAnswer(f"{len(values)} {what}, not alike")
    return values[0]


def one(found: list[Thing], what: str) -> Thing:
    if len(found) != 1:
        raise NoAnswer(f"{len(found)} {what}" if found else f"no {what}")
    return found[0]


def named(scene: Scene, colour: str) -> Thing:
    return one(matching(scene.things(), colour), f"{colour} objects")


def count(scene: Scene, s: Slots) -> Read:
    return {"number": str(len(matching(scene.things(counted=True), s.get("colour", ""))))}


def position(scene: Scene, s: Slots) -> Read:
    found = matching(scene.things(), s.get("colour", ""), s.get("shape", ""))
    return {"position": shared([t.position for t in found], "such objects")}


def colour(scene: Scene, s: Slots) -> Read:
    found = matching(scene.things(), "", s.get("shape", ""), s.get("position", ""))
    return {"colour": shared([t.colour for t in found], "objects there")}


def identity(scene: Scene, s: Slots) -> Read:
    thing = one(
        matching(scene.things(), s.get("colour", ""), "", s.get("position", "")), "objects there"
    )
    read: Read = {"name": thing.label} if thing.label else {}
    if thing.noun:
        read["noun"] = ALSO.get(thing.noun, frozenset({thing.noun}))
    if not read:
        raise Unsure("its outline names no shape and no label was given")
    return read


def size(scene: Scene, s: Slots) -> Read:
    things = scene.things()
    ranked = sorted(things, key=lambda t: t.area, reverse=s.get("extreme") == "largest")
    if len(ranked) < 2 or abs(ranked[0].area - ranked[1].area) < 1e-6:
        raise NoAnswer("no single extreme object")
    if len(matching(things, ranked[0].colour or "?")) != 1:
        raise NoAnswer("the extreme object's colour is not its alone")
    return {"object": ranked[0].colour or ""}


def relative_position(scene: Scene, s: Slots) -> Read:
    a, b = named(scene, s.get("object", "")), named(scene, s.get("other", ""))
    sides = [side for side in OPPOSITE if scene.place(a, b, side) == "on"]
    if len(sides) != 1:
        raise NoAnswer("apart on both axes or on neither: more than one relation holds")
    return {"relation": sides[0]}


MEETS = {  # which relations of the reference to an object each kind asks about
    "contain": {"contains"},
    "overlap": {"overlaps", "contains", "inside"},
    "touch": {"touches", "overlaps", "contains", "inside"},
}


def meeting(kind: str):
    def answer(scene: Scene, s: Slots) -> Read:
        reference = named(scene, s.get("object", ""))
        found = [
            t.colour
            for t in scene.things()
            if t is not reference and scene.meets(reference, t) in MEETS[kind]
        ]
        return {"object": frozenset(c for c in found if c)}

    return answer


def compare_counts(scene: Scene, s: Slots) -> Read:
    things = scene.things(counted=True)
    n, m = len(matching(things, s["object"])), len(matching(things, s["other"]))
    if n == m:
        return {"fixed": "as_many"}
    return {"fixed": "more", "colour": s["object"] if n > m else s["other"]}


def most_common_colour(scene: Scene, s: Slots) -> Read:  # noqa: ARG001
    ranked = Counter(t.colour for t in scene.things(counted=True)).most_common()
    if not ranked or len(ranked) > 1 and ranked[0][1] == ranked[1][1] or ranked[0][0] is None:
        raise NoAnswer("no one most common colour")
    return {"colour": ranked[0][0]}


def remove_and_count(scene: Scene, s: Slots) -> Read:
    things = scene.things(counted=True)
    return {"number": str(len(things) - len(matching(things, s.get("colour", ""))))}


def count_beside(scene: Scene, s: Slots) -> Read:
    reference = named(scene, s.get("object", ""))
    side = s["side"]
    others = [t for t in scene.things(counted=True) if t is not reference]
    on = [scene.place(t, reference, side) == "on" for t in others]
    if any(
        not o and scene.place(t, reference, OPPOSITE[side]) != "on"
        for t, o in zip(others, on, strict=True)
    ):
        raise NoAnswer("an object lies across the reference's edge: on neither side plainly")
    return {"number": str(sum(on))}


def which_object(scene: Scene, s: Slots) -> Read:
    reference = named(scene, s.get("object", ""))
    places = [
        (t, scene.place(t, reference, s["side"])) for t in scene.things() if t is not reference
    ]
    if any(p == "across" for _, p in places):
        raise NoAnswer("an object lies across the reference's edge on that side")
    return {"object": frozenset(t.colour for t, p in places if p == "on" and t.colour)}


def dominant_colour(scene: Scene, s: Slots) -> Read:  # noqa: ARG001
    ranked = Counter({c: a for c, a in scene.covers().items() if c}).most_common()
    if not ranked or len(ranked) > 1 and ranked[0][1] <= scene.area_margin * ranked[1][1]:
        raise NoAnswer("no colour plainly covers the most")
    return {"colour": ranked[0][0]}


LAYOUTS = {
    "x": ("left_only", "right_only", "both_sides"),
    "y": ("top_only", "bottom_only", "both_halves"),
}


def layout(scene: Scene, s: Slots) -> Read:
    axis = s.get("axis", "x")
    halves = [scene.half(t, axis) for t in scene.things()]
    if not halves or None in halves:
        raise NoAnswer("objects across the middle" if halves else "no objects")
    names = LAYOUTS[axis]
    return {
        "fixed": names[0]
        if set(halves) == {"before"}
        else names[1]
        if set(halves) == {"after"}
        else names[2]
    }


def scene_content(scene: Scene, s: Slots) -> Read:  # noqa: ARG001
    things, text = scene.things(counted=True), bool(scene.text_lines())
    if text:
        return {"fixed": "objects_and_text" if things else "text_no_objects"}
    if not things:
        raise NoAnswer("no object and no text")
    return {"fixed": "one_object_no_text" if len(things) == 1 else "several_objects_no_text"}


def read_text(scene: Scene, s: Slots) -> Read:  # noqa: ARG001
    """Any line written there (as a set, folded); `text_fits` also takes a run of several words
    within the writing."""
    return {"text": frozenset(line.casefold() for line in scene.text_lines())}


def text_fits(read: Read, option: Slots) -> bool | None:
    if "text" not in option:
        return None
    lines = read["text"]
    said = option["text"].casefold()
    return said in lines or (len(said.split()) > 1 and said in " ".join(sorted(lines)))


# --- clips: the actions a clip shows, in time ------------------------------------------------
FRAME = 0.05  # s: times this close are one (less than a frame of a 12 fps clip)


def action_label(scene: Scene, s: Slots) -> Read:  # noqa: ARG001
    start, end = scene.window()
    found = [
        st
        for st in scene.steps()
        if abs(st.start - start) < FRAME and (st.end < 0 or abs(st.end - end) < FRAME)
    ]
    if len(found) != 1:
        raise NoAnswer(f"{len(found)} actions shown over {start:g}-{end:g} s")
    return dict(found[0].slots)


def next_action(scene: Scene, s: Slots) -> Read:  # noqa: ARG001
    _, end = scene.window()
    later = [st for st in scene.steps() if st.start >= end - FRAME]
    if not later:
        raise NoAnswer("no action after the stretch shown")
    return dict(min(later, key=lambda st: st.start).slots)


def action_order(scene: Scene, s: Slots) -> Read:
    """The listed actions in the order the clip shows them, each as the clip's own parts."""
    listed_actions = steps(s.get("actions", "[]"))
    shown = [st.slots for st in sorted(scene.steps(), key=lambda st: st.start)]
    order = [st for st in shown if any(fits(dict(st), a) for a in listed_actions)]
    if len(order) != len(listed_actions):
        raise NoAnswer(f"{len(order)} of the {len(listed_actions)} actions listed are shown")
    return {"actions": listed_steps(order)}


def order_fits(read: Read, option: Slots) -> bool | None:
    """An order says what was read when each of its steps says the step shown at its place."""
    if "actions" not in option:
        return None
    shown, said = steps(str(read["actions"])), steps(option["actions"])
    if len(shown) != len(said):
        return False
    verdicts = [fits(dict(a), b) for a, b in zip(shown, said, strict=True)]
    return None if None in verdicts else all(verdicts)
