"""Text measures that hold across languages."""

from __future__ import annotations

import unicodedata


def width(text: str) -> int:
    """Display width: a wide (CJK) character counts two, as it carries about a word where a
    Latin letter carries a fifth of one; so option lengths compare sensibly in Chinese, and
    between a Chinese option and a printed English word kept in it."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _ideograph(c: str) -> bool:
    return "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf"


def text_language(text: str) -> str:
    """`zh` for text written mostly in Chinese (at least a third of its letters are CJK
    ideographs: a Chinese question that quotes an English word is still Chinese, an English one
    that quotes a Chinese name is not), else `en`."""
    letters = [c for c in text if c.isalpha()]
    ideographs = sum(1 for c in letters if _ideograph(c))
    return "zh" if letters and ideographs * 3 >= len(letters) else "en"
