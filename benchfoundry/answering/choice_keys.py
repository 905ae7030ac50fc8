"""Where a response may commit to a letter, found cheaply before any full pattern runs: the
answer markers ("the answer is B", "\\boxed{C}"), negations ("not A") and refusals ("cannot
determine") that choice reading looks for, each tried only where one of its anchor words occurs
(one scan of the response finds them all)."""

from __future__ import annotations

import re
from collections.abc import Sequence

REFUSALS = re.compile(
    r"\b(?:cannot|can ?not|can't|unable to|not possible to|impossible to|no way to)\s+(?:be\s+)?"
    r"(?:determine|determined|tell|answer|say|see|identify|know)\b"
    r"|\bnone of (?:the|these) (?:above|options|choices|answers)\b|\bnone of them\b"
    r"|\bno (?:correct|right|valid) (?:answer|option|choice)\b|\bnot enough information\b"
    r"|\bi(?:'m| am) (?:sorry|not sure)\b|\bi don't know\b"
    r"|无法(?:确定|判断|回答|得知)|不能确定|以上都不(?:是|对)|都不正确",
    re.IGNORECASE,
)
# Phrases that introduce the chosen letter; the letter follows within a few characters.
_MARKERS = [
    r"\\boxed\{\s*\(?([A-Z])\)?\s*\}",
    r"<answer>\s*\(?([A-Z])\)?\s*</answer>",
    r"\banswer\s*(?:is|would be|should be|=|:)\s*(?:option|choice|letter)?\s*[:\-]?\s*[\(\[\*\"']*([A-Z])\b(?![\w'])",
    r"\b(?:correct|right|best|final)\s+(?:answer|option|choice)\s*(?:is|would be|:)?\s*[:\-]?\s*(?:option|choice)?\s*[\(\[\*\"']*([A-Z])\b(?![\w'])",
    r"\b(?:option|choice)\s*[\(\[]?([A-Z])\b(?![\w'])",
    r"\bi(?:'d| would)? (?:choose|pick|select|go with|say|answer)\s*(?:option|choice)?\s*[\(\[]?([A-Z])\b(?![\w'])",
    r"答案\s*(?:是|为|：|:)?\s*[\(（]?([A-Z])",
    r"(?:选择|选)\s*[\(（]?([A-Z])",
]
# Each marker with its anchors: the lower-case words one of which every match of it begins with.
# A marker is tried only where an anchor occurs (a `find` in the lower-cased response), instead
# of being searched for through the whole response.
_MARKER_ANCHORS = [
    ("\\boxed",),
    ("<answer>",),
    ("answer",),
    ("correct", "right", "best", "final"),
    ("option", "choice"),
    ("i ", "i'd "),
    ("答案",),
    ("选",),
]
_MARKER_PATTERNS = [
    (anchors, re.compile(pattern, re.IGNORECASE))
    for anchors, pattern in zip(_MARKER_ANCHORS, _MARKERS, strict=True)
]
_REFUSAL_KEYS = (
    "can", "unable", "possible", "no way", "none", "no correct", "no right", "no valid",
    "not enough", "sorry", "not sure", "don't know", "无法", "不能", "都不",
)  # fmt: skip
NEGATION_ANCHORS = ("not", "isn't", "is not", "never", "except", "rather than", "instead of")


MARKER_BY_ANCHOR = {a: pattern for anchors, pattern in _MARKER_PATTERNS for a in anchors}
_KEYS = tuple(sorted({*MARKER_BY_ANCHOR, *NEGATION_ANCHORS, *_REFUSAL_KEYS}))
REFUSAL_SET = frozenset(_REFUSAL_KEYS)
NEGATION_SET = frozenset(NEGATION_ANCHORS)
# Any of the keys, found by one scan: when it finds none the response holds none of them (most
# responses), and only otherwise are they looked for one by one.


def _trie(words: Sequence[str]) -> str:
    """A pattern matching exactly `words`, as a trie (`c(?:an|hoice)`): a search tries one
    branch per first character at each position instead of one per word."""
    branches, ends = {}, False
    for word in words:
        if word:
            branches.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    parts = [re.escape(first) + _trie(rest) for first, rest in sorted(branches.items())]
    if not parts:
        return ""
    body = parts[0] if len(parts) == 1 and not ends else f"(?:{'|'.join(parts)})"
    return body + "?" if ends else body


ANY_KEY_PATTERN = _trie(_KEYS)
_ANY_KEY = re.compile(ANY_KEY_PATTERN)


# For an ASCII response, the keys are found from its words instead (one translation of its bytes
# and a split, where each `in` above is a scan of the whole text): the words that make each key
# worth trying. A marker or negation pattern begins with a word boundary, so its anchor word
# stands as a word of its own; "option", "choice" (a letter may follow with no space,
# "optionB") and the literal markers are looked up as substrings.
_WORD_BYTES = bytes(c if (97 <= c <= 122 or c == 39) else 32 for c in range(256))  # a-z and '
_REFUSAL_SEEN = "can"  # stands for "a refusal word occurs" in the returned set
_NEXT_ANSWER = ("answer", "option", "choice")
_NEXT_VERB = ("choose", "pick", "select", "go with", "say", "answer")
# Word: the keys it makes worth trying, and the words one of which must also occur for them (a
# marker like "best answer" or "I pick" is tried only where both do). A refusal's words (one of
# them is in every refusal `REFUSALS` reads in ASCII) give `_REFUSAL_SEEN`; the pattern decides.
_WORD_KEYS: dict[bytes, tuple[tuple[str, ...], tuple[str, ...]]] = {
    b"answer": (("answer",), ()),
    b"not": (("not", _REFUSAL_SEEN), ()),  # "is not B" is found at its "not"
    b"isn't": (("isn't",), ()),
    b"never": (("never",), ()),
    b"except": (("except",), ()),
    b"rather": (("rather than",), ()),
    b"instead": (("instead of",), ()),
    b"correct": (("correct",), _NEXT_ANSWER),
    b"right": (("right",), _NEXT_ANSWER),
    b"best": (("best",), _NEXT_ANSWER),
    b"final": (("final",), _NEXT_ANSWER),
    b"i": (("i ",), _NEXT_VERB),
    b"i'd": (("i'd ",), _NEXT_VERB),
    **{
        word: ((_REFUSAL_SEEN,), ())
        for word in (b"cannot", b"can", b"can't", b"unable", b"impossible", b"no", b"none")
    },
    b"sorry": ((_REFUSAL_SEEN,), ()),
    b"don't": ((_REFUSAL_SEEN,), ()),
}
_WORD_SET = frozenset(_WORD_KEYS)
_WORD_ALWAYS = {word: keys for word, (keys, after) in _WORD_KEYS.items() if not after}
_SUBSTRING_KEYS = ("option", "choice", "\\boxed", "<answer>")


def holds_no_key(low: str) -> bool:
    """True when a short lower-cased response surely holds none of the keys (`response_keys`
    is then empty); False says only that it may hold one."""
    return len(low) <= 64 and _ANY_KEY.search(low) is None


def response_keys(low: str) -> set[str]:
    """The anchors and keywords a lower-cased response holds: each marker anchor and negation
    anchor that may begin a match, and a refusal key where a refusal may be written."""
    if len(low) <= 64 and _ANY_KEY.search(low) is None:  # most short responses hold none
        return set()
    if not low.isascii():
        return {k for k in _KEYS if k in low}
    found = set()
    if "option" in low:
        found.add("option")
    if "choice" in low:
        found.add("choice")
    if "\\" in low or "<" in low:  # rare: "\boxed", "<answer>"
        found.update(k for k in _SUBSTRING_KEYS[2:] if k in low)
    for word in _WORD_SET.intersection(low.encode("ascii").translate(_WORD_BYTES).split()):
        keys = _WORD_ALWAYS.get(word)
        if keys is None:
            keys, after = _WORD_KEYS[word]
            for a in after:
                if a in low:
                    break
            else:
                continue
        found.update(keys)
    return found


def anchored_matches(
    pattern: re.Pattern[str], anchors: Sequence[str], text: str, low: str
) -> list[re.Match[str]]:
    """The matches of `pattern` in `text` that begin where one of `anchors` occurs in `low` (the
    lower-cased text; where lower-casing changes its length, a plain search)."""
    if len(low) != len(text):
        return list(pattern.finditer(text))
    found = []
    for anchor in anchors:
        at = low.find(anchor)
        while at != -1:
            match = pattern.match(text, at)
            if match is not None:
                found.append(match)
            at = low.find(anchor, at + 1)
    return found
