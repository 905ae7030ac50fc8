"""The truth check of template questions on the field pictures (`field_pictures`): the hard
drawings' check (`truth_check.check_item`), and first what makes a person hesitate there: a colour
word that could name an object whose colour a person would not name plainly ("How many blue
objects?" beside a navy star), a question about the colours of a picture holding such an
object, or a colour question whose options hold two names a person could give the key's object
(cyan beside blue). Such a question counts as wrong, as one nobody could answer does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchfoundry.core.letters import LETTERS
from benchfoundry.devtools.truth_check import Item, Verdict, check_item

# Names people give one colour between them (written by hand from the colour circle and the
# grey scale, not from the describer's own table)
CLOSE = {
    frozenset(pair)
    for pair in (
        ("red", "orange"), ("red", "pink"), ("red", "brown"), ("red", "purple"),
        ("orange", "yellow"), ("orange", "brown"), ("yellow", "green"), ("green", "cyan"),
        ("cyan", "blue"), ("blue", "purple"), ("purple", "pink"), ("black", "grey"),
        ("grey", "white"),
    )
}  # fmt: skip
COLOUR_SLOTS = ("colour", "object", "other")  # the parts that name a colour
# Kinds that ask which colour something is (the colour at a place, the most common colour)
ASK_COLOUR = ("colour", "shape_colour", "most_common_colour")


def _colours_in(slots: Sequence[Mapping[str, str]]) -> set[str]:
    return {s[k] for s in slots for k in COLOUR_SLOTS if s.get(k)}


def hesitation(item: Item, scene: dict) -> str | None:
    """Why a person would hesitate on this question about this scene, or None."""
    kind = item.generator.removeprefix("template:")
    keyed = item.option_slots[LETTERS.index(item.answer)]
    unnamed = [o for o in scene.get("objects", []) if o.get("colour") is None]
    could_be = {c for o in unnamed for c in o.get("could_be", [])}
    asks_colour = kind in ASK_COLOUR
    words = _colours_in([item.slots]) | (set() if asks_colour else _colours_in(item.option_slots))
    if named := words & could_be:
        return f"'{sorted(named)[0]}' could name an object whose colour people do not agree on"
    if asks_colour and unnamed and kind == "most_common_colour":
        return "the picture holds an object whose colour people do not agree on"
    key = keyed.get("colour", "")
    if asks_colour and any(
        frozenset((key, o.get("colour", ""))) in CLOSE for o in item.option_slots
    ):
        return "the options hold two names a person could give one object"
    return None


def check_field(item: Item, scene: dict) -> Verdict:
    if why := hesitation(item, scene):
        return Verdict(False, None, why)
    return check_item(item, scene)
