"""Text measures that hold across languages."""

from __future__ import annotations

import unicodedata


def width(text: str) -> int:
    """Display width: a wide (CJK) character counts two, as it carries about a word where a
    Latin letter carries a fifth of one; so option lengths compare sensibly in Chinese, and
    between a Chinese option and a printed English word kept in it."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
