"""The English words the template kinds are written with, and an option's English from what it
is. Word for word as the templates have always written them: question ids are hashes of this
text, so a change here changes every id. Each kind's question is written in its entry
(`meaning.kinds`)."""

from __future__ import annotations

from collections.abc import Mapping

from benchfoundry.meaning.parts import NoForm, slot, unlisted

Slots = Mapping[str, str]

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


def name(slots: Slots, key: str = "object") -> str:
    """An object named by its colour (the `object` slot, or `other`)."""
    return f"the {slot(slots, key)} object"


def article(noun: str) -> str:
    """`a circle`, `an oval`: a shape's name as an option says it."""
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def no(what: str) -> str:
    raise NoForm(f"no English for {what}")


def option(slots: Slots) -> str:
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
    raise NoForm(f"no option from {dict(slots)}")
