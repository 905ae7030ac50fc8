"""Heuristic choice extraction: read which option a free-form response commits to, or say that
it does not. It never guesses: a response that names two options, names a letter that is not an
option, or negates in a way it cannot resolve is undecided (None), and goes to the LLM step.
A refusal or "cannot determine" is Z, scored wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import compress
from typing import NamedTuple

from benchfoundry.answering.choice_keys import (
    MARKER_BY_ANCHOR,
    NEGATION_ANCHORS,
    NEGATION_SET,
    REFUSAL_SET,
    REFUSALS,
    anchored_matches,
    holds_no_key,
    response_keys,
)
from benchfoundry.answering.choice_text import (
    _NUMBER,
    _NUMBER_WORDS,
    _number,
    _options_plain,
    _plain,
    _unspaced,
    normalise,
)
from benchfoundry.core.letters import LETTERS

Z = "Z"


class Extraction(NamedTuple):
    """A letter (or Z), who decided it, and why; `letter` None means undecided. (A named
    tuple: it is made once per answer read, and costs a third of a frozen dataclass.)"""

    letter: str | None
    by: str  # "heuristic", "llm" or "none"
    reason: str

    @property
    def decided(self) -> bool:
        return self.letter is not None


_NEGATED = re.compile(
    r"\b(?:not|isn't|is not|never|except|rather than|instead of)\s+(?:option\s+)?[\(\[]?([A-Z])\b(?![\w'])",
    re.IGNORECASE,
)
# A response that is an answer marker and its letter, and nothing else: decided as the full
# rules would (one marked letter, no other letter, nothing negated, no refusal), in one match.
_ONLY_MARKER = re.compile(
    r"(?i:(?:the\s+)?(?:correct\s+|final\s+|right\s+|best\s+)?answer\s*(?:is|:)\s*)"
    r"[\(\[]?([A-Z])[\)\]]?\.?"
)
_BARE = re.compile(r"^[\(\[\*\"'“]*([A-Za-z])[\)\]\*\"'”]*[.:)]?$")
_LEADING = re.compile(r"^[\(\[\*]*([A-Z])(?:[\)\]\*]+[\s.:,\-]*|[.:,\-]+\s*|\s*$)")
_TOKEN = re.compile(r"(?<![A-Za-z0-9'])([A-Z])(?![A-Za-z0-9'])")
_WORDS_LIKE_LETTERS = ("A", "I")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'")


def _token_at(text: str, letter: str) -> list[int]:
    """Where `letter` stands alone in `text`, as `_TOKEN` finds it (a `find` per occurrence
    in place of a search with a look-behind)."""
    found = []
    at = text.find(letter)
    while at != -1:
        if (at == 0 or text[at - 1] not in _WORD_CHARS) and text[
            at + 1 : at + 2
        ] not in _WORD_CHARS:
            found.append(at)
        at = text.find(letter, at + 1)
    return found


_CAPITALS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _bracketed_letters(text: str) -> set[str]:
    """The letters written as labels, "(C)" or "[C]" (never a word), by a `find` per bracket:
    what a search for them finds, in a fraction of its time on a long response."""
    found = set()
    for opening in "([":
        at = text.find(opening)
        while at != -1:
            if text[at + 1 : at + 2] in _CAPITALS and text[at + 2 : at + 3] in (")", "]"):
                found.add(text[at + 1])
            at = text.find(opening, at + 1)
    return found


_LISTED = {L: re.compile(rf"[\(\[]?{L}[\)\].:]\s*\S") for L in LETTERS}  # "A) ... B) ..."


# Words after which "A" or "I" is a letter being talked about, not an article or a pronoun.
_LETTER_VERBS = frozenset(
    [
        "or",
        "and",
        "nor",
        "is",
        "was",
        "are",
        "were",
        "seems",
        "looks",
        "then",
        "because",
        "since",
        "as",
        "correct",
        "right",
        "wrong",
        "would",
        "should",
        "must",
        "can",
        "could",
        "might",
        "will",
        "fits",
        "matches",
    ]
)


_NEXT_WORD = re.compile(r"\s+([A-Za-z']{2,})")


# After "I", only these make it the letter: "I would" and "I can" are the pronoun.
_I_LETTER_VERBS = frozenset(["or", "and", "nor", "is", "was", "seems", "looks", "fits", "matches"])


def _word_letter(text: str, position: int) -> bool:
    """True when the capital at `position` is the article "A" or pronoun "I" of a sentence."""
    letter = text[position]
    if letter != "A" and letter != "I":
        return False
    following = _NEXT_WORD.match(text, position + 1)
    if following is None:
        return False
    verbs = _I_LETTER_VERBS if letter == "I" else _LETTER_VERBS
    return following.group(1).lower() not in verbs


def _bracketed(text: str, position: int) -> bool:
    """A letter written as a label, "(C)" or "[C]", which counts even inside a long response."""
    return position > 0 and text[position - 1] in "([" and text[position + 1 : position + 2] in ")]"


def _lower_letter(text: str, position: int) -> bool:
    """A lower-case letter that stands for an option (`option c`, `the answer is b.`): a word of
    its own (not the `s` of `options`), and not `a` or `i`, which are the article and the pronoun
    unless bracketed (`(a)`)."""
    if position > 0 and text[position - 1].isalpha():
        return False
    return text[position] not in "ai" or _bracketed(text, position)


# A single valid letter's reading, made once (read for most responses).
_DECIDED: dict[tuple[str, str], Extraction] = {}


def _decide(letters: set[str], valid: str, rule: str) -> Extraction | None:
    if len(letters) == 1:
        (letter,) = letters
        if letter in valid:
            decided = _DECIDED.get((letter, rule))
            if decided is None:
                decided = _DECIDED[letter, rule] = Extraction(letter, "heuristic", rule)
            return decided
    if not letters:
        return None
    invalid = sorted(letters - set(valid))
    if invalid:
        return Extraction(None, "heuristic", f"{rule}: names {', '.join(invalid)}, not an option")
    if len(letters) > 1:
        return Extraction(None, "heuristic", f"{rule}: commits to {', '.join(sorted(letters))}")
    return Extraction(letters.pop(), "heuristic", rule)


def extract_choice(response: str | None, options: Sequence[str]) -> Extraction:
    """The option letter a response commits to, Z for a refusal, or undecided (letter None)."""
    if response is not None and len(response) <= _REMEMBERED:
        read = _by_letters_remembered(response, len(options))
    else:
        read = _by_letters(response, len(options))
    if isinstance(read, str):
        return _by_content(read, options, LETTERS[: len(options)])
    return read


# Short responses recur ("B", "The answer is C.", "I cannot tell."): their reading by letters is
# remembered per option count. Long ones rarely recur and would fill the memory.
_REMEMBERED = 64


def clear_caches() -> None:
    """Forget remembered readings and option forms (to time a run from cold, as a new process
    starts)."""
    _by_letters_remembered.cache_clear()
    _options_plain.cache_clear()


def _by_letters(response: str | None, count: int) -> Extraction | str:
    """What the response's letters, answer markers and refusals decide for `count` options, which
    does not depend on the option texts; where they decide nothing, the normalised response, for
    `_by_content` to read."""
    valid = LETTERS[:count]
    text = normalise(response or "")
    if not text:
        return Extraction(Z, "heuristic", "empty response")
    if len(text) > 64:  # a short response of words it is not
        return _by_rules(text, valid)
    quick = _words_only(text, valid)
    return quick if quick is not None else _by_rules(text, valid)


def _words_only(text: str, valid: str) -> Extraction | str | None:
    """What `_by_rules` reads in a short response of words ("C. a horse", "It is the horse."),
    found with fewer steps, or None where it is not one. It is no bare letter (it has a space);
    with no key (so no answer marker, negation or refusal either) and no capital after its first
    character, its only possible letter is a label at its start."""
    if " " not in text or not text.isascii() or text.count(" ") > 11:
        return None
    low = text.lower()
    if not low.startswith(text[1:], 1) or not holds_no_key(low):
        return None
    first = text[0]
    if not "A" <= first <= "Z" or text[1] in _WORD_CHARS:
        return text  # no letter: read by content
    if first in _WORDS_LIKE_LETTERS and text[1] == " ":
        return None  # "A" or "I" before a word: perhaps the article or the pronoun
    return _decide({first}, valid, "letter")


def _by_rules(text: str, valid: str) -> Extraction | str:
    """`_by_letters` of a normalised, non-empty response, by the full rules."""
    # 1. The whole response is a letter: "B", "(B)", "B.", "**B**", "[B]", "d" (not "a"); it has
    # no space.
    if " " not in text and (bare := _BARE.match(text)) is not None:
        letter = bare.group(1)
        if letter.islower() and not _lower_letter(text, bare.start(1)):
            return Extraction(None, "heuristic", f"a lone '{letter}' may be a word, not a letter")
        return _decide({letter.upper()}, valid, "bare letter") or Extraction(
            None, "heuristic", "unreachable"
        )
    low = text.lower()
    # (`text` has single spaces: 12 words or fewer is 11 spaces or fewer.)
    short = text.count(" ") <= 11
    # "The answer is B." and nothing else (it has 4 spaces at most; an ASCII response without
    # "answer" is not one).
    if (
        short
        and (not text.isascii() or "answer" in low)
        and (only := _ONLY_MARKER.fullmatch(text)) is not None
    ):
        return _decide({only.group(1)}, valid, "answer marker") or Extraction(
            None, "heuristic", "unreachable"
        )
    keys = response_keys(low)  # the anchors and keywords it holds: most hold none
    # 3 (found first). Letters standing alone ("B. a dog", "It is C.", "D, not B"); articles are
    # not letters. In a long response only labels ("(C)") count.
    if short:
        lone = _TOKEN.findall(text)
        tokens = set(lone)
        if "A" in tokens or "I" in tokens:  # the article and the pronoun are not letters
            for word in _WORDS_LIKE_LETTERS:
                if word in tokens and all(_word_letter(text, at) for at in _token_at(text, word)):
                    tokens.discard(word)
        if not keys:  # most short responses: no marker, negation or refusal to weigh
            if not tokens:
                return text
            if len(tokens) > 1 and all(_LISTED[L].search(text) for L in tokens):
                return Extraction(None, "heuristic", f"lists options {', '.join(sorted(tokens))}")
            return _decide(tokens, valid, "letter")
    else:
        tokens = _bracketed_letters(text)
    # A negated letter stands alone: a short response with no lone capital negates none.
    negated = set()
    if (not short or lone) and not keys.isdisjoint(NEGATION_SET):
        anchors = [a for a in NEGATION_ANCHORS if a in keys]
        negated = {
            m.group(1).upper()
            for m in anchored_matches(_NEGATED, anchors, text, low)
            if m.group(1).isupper()
        }
    # 2. Explicit markers: "the answer is B", "Answer: B", "\boxed{B}", "<answer>B</answer>", "答案是B".
    marked = set()
    for anchor in keys:
        pattern = MARKER_BY_ANCHOR.get(anchor)
        if pattern is None:
            continue
        for match in anchored_matches(pattern, (anchor,), text, low):
            letter, at = match.group(1), match.start(1)
            if letter.isupper() and not _word_letter(text, at):
                marked.add(letter)
            elif letter.islower() and _lower_letter(text, at):
                marked.add(letter.upper())
    # A leading label ("B. because..."); in a short response it is one of the tokens already.
    # (Only after an opening bracket or asterisk, or a letter and a closing mark: at the end of
    # the response it is not.)
    leading = (
        _LEADING.match(text) if not short and (text[0] in "([*" or text[1] in ")]*.:,-") else None
    )
    if leading is not None and (leading.group(1) not in "AI" or not _word_letter(text, 0)):
        tokens.add(leading.group(1))
    letters = tokens - negated if negated else tokens
    if negated:
        marked -= negated
    if marked:
        also = letters - marked
        if also:
            return Extraction(
                None, "heuristic", f"answer marker, but also names {', '.join(sorted(also))}"
            )
        return _decide(marked, valid, "answer marker")
    listed = len(letters) > 1 and all(_LISTED[L].search(text) for L in letters)
    refusal = not keys.isdisjoint(REFUSAL_SET) and REFUSALS.search(text) is not None
    if letters:
        if refusal:
            return Extraction(None, "heuristic", "refuses but also names a letter")
        if listed:
            return Extraction(None, "heuristic", f"lists options {', '.join(sorted(letters))}")
        return _decide(letters, valid, "letter")
    if negated:
        return Extraction(None, "heuristic", f"only rules out {', '.join(sorted(negated))}")
    if refusal:
        return Extraction(Z, "heuristic", "refusal or cannot determine")
    return text


_by_letters_remembered = lru_cache(maxsize=1 << 16)(_by_letters)


_ARTICLES = ("", "a ", "an ", "the ")
_YES_NO = re.compile(r"\b(yes|no)\b")

_Forms = tuple[str, list[str], list[str], list[int]]  # `_plain` of a response, `_options_plain`


def _by_content(
    text: str, options: Sequence[str], valid: str, forms: _Forms | None = None
) -> Extraction:
    """Option texts, numbers and yes/no within the response (`forms`: the plain forms of the
    response and its options, where they were made for many rows at once)."""
    if forms is None:
        plain = _plain(text)
        option_plain, option_padded, cjk = _options_plain(tuple(options))
    else:
        plain, option_plain, option_padded, cjk = forms
    if option_plain.count(plain) == 1 and plain:
        return _decide({valid[option_plain.index(plain)]}, valid, "option text")  # type: ignore[return-value]
    # `plain` and the options' plain forms are words joined by single spaces, so a whole-word
    # match is a match of the space-padded forms (no pattern per option text to compile).
    padded = f" {plain} "
    found = list(compress(range(len(option_padded)), map(padded.__contains__, option_padded)))
    # An option found only as part of a longer found option ("cat" in "black cat") does not count.
    if len(found) > 1:
        found = [
            i
            for i in found
            if not any(j != i and option_plain[i] in option_plain[j] for j in found)
        ]
    if " not " in padded or " no " in padded:
        found = [
            i
            for i in found
            if not any(
                f" {neg} {art}{option_plain[i]} " in padded
                for neg in ("not", "no")
                for art in _ARTICLES
            )
        ]
    if not found and cjk:
        found = _unspaced(plain, option_plain, cjk)
    if len(found) == 1:
        return _decide({valid[found[0]]}, valid, "option text within the response")  # type: ignore[return-value]
    if len(found) > 1:
        return Extraction(
            None, "heuristic", f"mentions options {', '.join(valid[i] for i in found)}"
        )
    numbers = {float(n) for n in _NUMBER.findall(text)}
    words = plain.split()
    numbers |= {
        _NUMBER_WORDS[w] for w in words if w in _NUMBER_WORDS and (w != "one" or len(words) == 1)
    }
    option_numbers = {i: _number(o) for i, o in enumerate(options)}
    matched = {
        valid[i] for i, value in option_numbers.items() if value is not None and value in numbers
    }
    if numbers and matched:
        return _decide(matched, valid, "number")
    yes_no = {p: i for i, p in enumerate(option_plain) if p in ("yes", "no")}
    if yes_no:
        words = set(_YES_NO.findall(plain))
        said = {valid[yes_no[w]] for w in words if w in yes_no}
        if len(said) == 1:
            return Extraction(said.pop(), "heuristic", "yes/no")
    return Extraction(None, "heuristic", "no option recognised")
