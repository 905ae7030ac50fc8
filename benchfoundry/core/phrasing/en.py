"""The English form of every template kind, word for word as the templates have always written
it (question ids are hashes of this text: a change here changes every id)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from benchfoundry.core.phrasing.parts import NoForm, slot, unlisted

Slots = Mapping[str, str]


def name(slots: Slots, key: str = "object") -> str:
    """An object named by its colour (the `object` slot, or `other`)."""
    return f"the {slot(slots, key)} object"


def _count(s: Slots) -> str:
    colour = s.get("colour")
    if colour:
        return f"How many {colour} objects are there in the image?"
    return "How many objects are there in the image?"


def _position(s: Slots) -> str:
    colour, shape = slot(s, "colour"), s.get("shape")
    thing = f"{colour} {shape}" if shape else colour
    return f"Where in the image is the {thing} object?"


def _colour(s: Slots) -> str:
    shape = s.get("shape")
    thing = f"{shape} object" if shape else "object"
    return f"What colour is the {thing} at the {slot(s, 'position')} of the image?"


def _identity(s: Slots) -> str:
    where, colour = slot(s, "position"), s.get("colour")
    if colour:
        return f"What is the {colour} object at the {where} of the image?"
    return f"What is the object at the {where} of the image?"


def _order(s: Slots) -> str:
    listed = "; ".join(f'"{x}"' for x in unlisted(slot(s, "labels")))
    return f"In what order are these actions performed in the video: {listed}?"


LAYOUTS = {
    "x": "Which side of the image are the objects on, left or right?",
    "y": "Which half of the image holds the objects, top or bottom?",
}

QUESTIONS: dict[str, Callable[[Slots], str]] = {
    "count": _count,
    "position": _position,
    "colour": _colour,
    "size": lambda s: f"Which object is the {slot(s, 'extreme')} in the image?",
    "relative_position": lambda s: f"Where is {name(s)} relative to {name(s, 'other')}?",
    "read_text": lambda s: "Which text is written in the image?",
    "identity": _identity,
    "contain": lambda s: f"Which object is inside {name(s)}?",
    "overlap": lambda s: f"Which object overlaps {name(s)}?",
    "touch": lambda s: f"Which object touches {name(s)}?",
    "compare_counts": lambda s: (
        f"Are there more {slot(s, 'object')} objects, more {slot(s, 'other')} objects, "
        "or as many of each in the image?"
    ),
    "most_common_colour": lambda s: (
        "Which colour is the most common among the objects in the image?"
    ),
    "remove_and_count": lambda s: (
        f"If the {slot(s, 'colour')} objects were removed, how many objects would remain?"
    ),
    "count_beside": lambda s: f"How many objects are {slot(s, 'side')} {name(s)}?",
    "which_object": lambda s: f"Which object is {slot(s, 'side')} {name(s)}?",
    "scene_content": lambda s: "What does the image contain?",
    "dominant_colour": lambda s: (
        "Apart from the background, which colour covers the largest area of the image?"
    ),
    "layout": lambda s: LAYOUTS.get(slot(s, "axis")) or _no(f"axis {s['axis']!r}"),
    "action_label": lambda s: "What action is performed in the video?",
    "next_action": lambda s: (
        "The video shows the first steps of an activity. What is most likely to happen next?"
    ),
    "action_order": _order,
    # the synthetic scenes' reference questions (seed questions that carry their slots)
    "count_shape": lambda s: f"How many {slot(s, 'noun')}s are there in the image?",
    "shape_colour": lambda s: f"What colour is the {slot(s, 'noun')}?",
    "read_word": lambda s: "Which word is written in the image?",
}

FIXED = {
    "as_many": "as many of each",
    "one_object_no_text": "one object and no text",
    "several_objects_no_text": "several objects and no text",
    "text_no_objects": "text but no objects",
    "objects_and_text": "both objects and text",
    "left_only": "only the left side",
    "right_only": "only the right side",
    "both_sides": "both sides",
    "top_only": "only the top half",
    "bottom_only": "only the bottom half",
    "both_halves": "both halves",
}


def _no(what: str) -> str:
    raise NoForm(f"no English for {what}")


def article(noun: str) -> str:
    """`a circle`, `an oval`: a shape's name as an option says it."""
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def question(kind: str, slots: Slots) -> str:
    try:
        write = QUESTIONS[kind]
    except KeyError:
        raise NoForm(f"no template kind {kind!r}") from None
    return write(slots)


def option(kind: str, slots: Slots) -> str:
    """An option from what it is: a count, a colour, a place, a shape, an object, a relation,
    printed text, a fixed phrase, an action label or an order of them."""
    if "fixed" in slots:
        if slots["fixed"] == "more":
            return f"more {slot(slots, 'colour')} objects"
        if slots["fixed"] in FIXED:
            return FIXED[slots["fixed"]]
        raise NoForm(f"no fixed phrase {slots['fixed']!r}")
    if "labels" in slots:
        return ", then ".join(unlisted(slots["labels"]))
    if "relation" in slots:
        return f"{slots['relation']} it"
    if "object" in slots:
        return name(slots)
    if "noun" in slots:
        return article(slots["noun"])
    for key in ("number", "colour", "position", "text", "name", "label"):
        if key in slots:
            return slots[key]
    raise NoForm(f"no option of {kind!r} from {dict(slots)}")
