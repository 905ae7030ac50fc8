"""The text side of choice reading: normalising a response, the case- and punctuation-free
forms option texts are compared in (ASCII by a byte table, other scripts by Unicode folding),
numbers and number words, and option texts in scripts written without spaces (Chinese,
Japanese, Korean), found as substrings unless negated or inside a longer option."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")

_SPACES = re.compile(r"\s+")
_LOOSE = re.compile(r"\s\s|[^\S ]")  # spaces that normalising changes
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalise(text: str) -> str:
    """Full-width forms to ASCII, markdown emphasis and code marks removed, spaces collapsed."""
    if text.isascii():  # a tab, a new line or another control character, or two spaces
        loose = not text.isprintable() or "  " in text
    else:
        text = unicodedata.normalize("NFKC", text)
        loose = _LOOSE.search(text) is not None
    if "*" in text or "_" in text or "`" in text:
        text = text.replace("**", "").replace("__", "").replace("`", "")
        loose = loose or "  " in text
    return _SPACES.sub(" ", text).strip() if loose else text.strip()


# ASCII punctuation (what `[^\w\s]` matches below 128) to spaces and capitals to lower case, for
# the fast path of `_plain`.
_ASCII_PLAIN = bytes(
    ord(c.lower()) if (c.isalnum() or c == "_" or c.isspace()) else ord(" ")
    for c in map(chr, range(128))
) + bytes(range(128, 256))


def _plain(text: str) -> str:
    """Case- and punctuation-insensitive form for comparing option texts."""
    if text.isascii():  # lower-cased and punctuation to spaces in one pass over the bytes
        return " ".join(text.encode("ascii").translate(_ASCII_PLAIN).decode("ascii").split())
    return _SPACES.sub(
        " ", _PUNCTUATION.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    ).strip()


# Scripts written without spaces between words (Chinese, Japanese) and Korean, whose particles
# attach to the noun: an option text in them is looked for as a substring, not as whole words.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@lru_cache(maxsize=1 << 16)
def _options_plain(options: tuple[str, ...]) -> tuple[list[str], list[str], list[int]]:
    """The `_plain` forms of a row's option texts, each padded with a space either side (an
    empty one as a form no response holds), and which of them hold CJK characters, remembered:
    a row's options are read once per pass and model."""
    joined = "\n".join(options)
    if joined.isascii() and joined.count("\n") == len(options) - 1:
        # All at once: the byte table keeps the new lines between them, each form is then split.
        plain = joined.encode("ascii").translate(_ASCII_PLAIN).decode("ascii")
        forms = [" ".join(o.split()) for o in plain.split("\n")]
        cjk = []
    else:
        forms = [_plain(o) for o in options]
        cjk = [i for i, o in enumerate(forms) if not o.isascii() and _CJK.search(o) is not None]
    return forms, [f" {o} " if o else "\0" for o in forms], cjk


def _number(text: str) -> float | None:
    text = text.strip()
    if not text or not (text[0].isdigit() or text[0] in "+-."):
        return None  # the common case, without raising
    try:
        return float(text.strip().rstrip("."))
    except ValueError:
        return None


# Number words read as the numbers they name (`three` for an option `3`); "one" only as the whole
# response, since "the one on the left" names no number.
_NUMBER_WORDS = {
    w: float(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}


_CJK_NEGATIONS = ("不是", "并非", "而非", "不选", "排除")


def _occurrences(text: str, part: str) -> list[int]:
    found = []
    at = text.find(part)
    while at != -1:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _unspaced(plain: str, option_plain: list[str], cjk: list[int]) -> list[int]:
    """The options in CJK script that `plain` names as substrings (正确答案为香蕉): an
    occurrence inside an occurrence of a longer option (红色 in 深红色) or right after a negation
    (不是苹果) does not count."""
    spans = {i: _occurrences(plain, option_plain[i]) for i in cjk}
    found = []
    for i, starts in spans.items():
        size = len(option_plain[i])
        for at in starts:
            inside = any(
                s <= at and at + size <= s + len(option_plain[j])
                for j in spans
                if len(option_plain[j]) > size
                for s in spans[j]
            )
            if not inside and not plain[:at].rstrip().endswith(_CJK_NEGATIONS):
                found.append(i)
                break
    return found
