"""Answer letters: a question's options are A, B, C... in order, ten at most. Every stage names
options by these helpers instead of its own copy of the alphabet or `ord(x) - 65`."""

from __future__ import annotations

LETTERS = "ABCDEFGHIJ"
MAX_OPTIONS = len(LETTERS)


def letter(index: int) -> str:
    """The letter of the option at `index` (0 -> A)."""
    if not 0 <= index < MAX_OPTIONS:
        raise ValueError(f"option index {index} is outside A..{LETTERS[-1]}")
    return LETTERS[index]


def index_of(answer: str) -> int:
    """The position of the option an answer letter names (A -> 0)."""
    position = LETTERS.find(answer) if len(answer) == 1 else -1
    if position < 0:
        raise ValueError(f"'{answer}' is not an answer letter (A..{LETTERS[-1]})")
    return position


def letters(n: int) -> str:
    """The letters of a question with `n` options."""
    if not 0 <= n <= MAX_OPTIONS:
        raise ValueError(f"{n} options; a question has at most {MAX_OPTIONS}")
    return LETTERS[:n]


def is_letter_of(answer: object, n: int) -> bool:
    """Whether `answer` is exactly one letter of a question with `n` options (not '', not 'AB')."""
    return isinstance(answer, str) and len(answer) == 1 and answer in LETTERS[:n]
