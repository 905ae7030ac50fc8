"""The truth check of template questions on the field pictures (`field_pictures`): the hard
drawings' check (`truth_check.check`), and first what makes a person hesitate there: a colour
word that could name an object whose colour a person would not name plainly ("How many blue
objects?" beside a navy star), a question about the colours of a picture holding such an
object, or a colour question whose options hold two names a person could give the key's object
(cyan beside blue). Such a question counts as wrong, as one nobody could answer does."""

from __future__ import annotations

import re

from benchfoundry.core.letters import LETTERS
from benchfoundry.devtools.truth_check import check
from benchfoundry.devtools.truth_check_more import Verdict

COLOUR_WORDS = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink", "brown",
                "black", "white", "grey")  # fmt: skip
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
COLOUR_QUESTIONS = ("What colour is", "Which colour is")


def _colours_in(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.casefold()) if w in COLOUR_WORDS}


def hesitation(question: str, options: list[str], keyed: str, scene: dict) -> str | None:
    """Why a person would hesitate on this question about this scene, or None."""
    unnamed = [o for o in scene.get("objects", []) if o.get("colour") is None]
    could_be = {c for o in unnamed for c in o.get("could_be", [])}
    asks_colour = question.startswith(COLOUR_QUESTIONS)
    words = _colours_in(question) | (set() if asks_colour else _colours_in(" ".join(options)))
    if named := words & could_be:
        return f"'{sorted(named)[0]}' could name an object whose colour people do not agree on"
    if asks_colour and unnamed and not question.startswith("What colour is the"):
        return "the picture holds an object whose colour people do not agree on"
    if asks_colour and any(frozenset((keyed.casefold(), o.casefold())) in CLOSE for o in options):
        return "the options hold two names a person could give one object"
    return None


def check_field(question: str, options: list[str], answer: str, scene: dict) -> Verdict:
    keyed = options[LETTERS.index(answer)]
    if why := hesitation(question, options, keyed, scene):
        return Verdict(False, None, why)
    return check(question, options, answer, scene)
