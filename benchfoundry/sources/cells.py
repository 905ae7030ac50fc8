"""The cells of a table source's row, checked: its options (letter columns or a list, MMStar's
inline "Options: A: ..."), an image path inside the source's root, control characters, and the
seed question as a whole with its answer. Each check returns the value or the problem as
(reason, detail), or a `Rejection`, for the reader of the table to record.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.reasons import Rejection
from benchfoundry.sources.items import SeedQuestion

MORE_LETTERS = "KLMNOPQRSTUVWXYZ"  # option columns a source may have beyond what a question keeps
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]|\r(?!\n)")
_ANSWER = re.compile(r"^\(?([A-J])[).:]?$")


def text_of(value: Any) -> str:
    return "" if value is None else str(value)


def parse_options(fields: dict[str, Any]) -> tuple[list[str], tuple[str, str] | None]:
    """Options from letter columns A..J (K..Z when present): the filled ones, in order, or the
    problem as (reason, detail)."""
    extra = [c for c in MORE_LETTERS if text_of(fields.get(c)).strip()]
    if extra:
        return [], (
            "too_many_options",
            f"option(s) {', '.join(extra)} are filled; at most {len(LETTERS)} (A..J) are supported",
        )
    return check_option_list([fields.get(letter) for letter in LETTERS])


def check_option_list(values: list[Any]) -> tuple[list[str], tuple[str, str] | None]:
    """The filled options in order (trailing empties dropped), or the problem as (reason, detail)."""
    filled = [
        (letter, text_of(value).strip()) for letter, value in zip(LETTERS, values, strict=False)
    ]
    if len(values) > len(LETTERS) and any(text_of(v).strip() for v in values[len(LETTERS) :]):
        return [], (
            "too_many_options",
            f"{len(values)} options; at most {len(LETTERS)} (A..J) are supported",
        )
    last = max((i for i, (_, text) in enumerate(filled) if text), default=-1)
    gaps = [letter for letter, text in filled[: last + 1] if not text]
    if gaps:
        return [], ("option_gap", f"option {gaps[0]} is empty while a later option is filled")
    return [text for _, text in filled[: last + 1]], None


def resolve_inside(root: Path, value: str | Path) -> Path | None:
    """The file `value` names (relative to `root` unless absolute), links resolved, when it lies
    inside `root`; None when it leads outside."""
    candidate = Path(value)
    real = Path(os.path.realpath(candidate if candidate.is_absolute() else root / candidate))
    return real if real.is_relative_to(os.path.realpath(root)) else None


def image_file(value: str, root: Path) -> tuple[Path | None, tuple[str, str] | None]:
    """The file an image path names inside `root`, or why it cannot be read: (reason, detail)."""
    if (where := control_character(value)) is not None:
        return None, ("control_characters", f"the image path holds {where}")
    file = resolve_inside(root, value)
    return (
        (file, None) if file is not None else (None, ("path_outside_root", _outside(value, root)))
    )


def _outside(value: str | Path, root: Path) -> str:
    return (
        f"image path '{value}' leads outside {root}; set the source's image_root to a folder "
        "that may be read"
    )


def duplicated(names: list[str]) -> list[str]:
    """Column names that appear more than once, in order of first appearance."""
    return [n for n in dict.fromkeys(names) if names.count(n) > 1]


def control_character(text: str) -> str | None:
    """The first control character in `text` (C0, but tab, newline and CR before a newline),
    described with its position; None when there is none."""
    found = _CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X} at position {found.start()}"


def split_inline_options(question: str) -> tuple[str, list[str]] | None:
    """Split MMStar-style text ("...\\nOptions: A: x, B: y, C: z") into stem and options."""
    marker = re.search(r"\s*Options:\s*", question)
    if marker is None:
        return None
    stem, body = question[: marker.start()].strip(), question[marker.end() :]
    options: list[str] = []
    start = None
    for i, letter in enumerate(LETTERS):
        found = re.compile(rf"(?:^|,\s*|\n\s*){letter}[:.]\s*").search(
            body, 0 if start is None else start
        )
        if found is None or (i == 0 and found.start() != 0):
            break
        if start is not None:
            options.append(body[start : found.start()].strip())
        start = found.end()
    if start is None:
        return None
    options.append(body[start:].strip())
    return (stem, options) if len(options) >= 2 else None


def make_seed(
    ref: str,
    kind: str,
    image_source: str,
    question: str,
    options: list[str],
    answer: str,
    extra: dict[str, Any],
) -> SeedQuestion | Rejection:
    """Check a row's question, options and answer; return the seed or the reason it is refused."""
    hint_text = text_of(extra.get("hint"))
    fields = [("question", question), ("hint", hint_text)]
    fields += [(f"option {letter}", text) for letter, text in zip(LETTERS, options, strict=False)]
    for name, text in fields:
        if (where := control_character(text)) is not None:
            return Rejection(ref, kind, "control_characters", f"the {name} holds {where}")
    question = question.strip()
    if not question:
        return Rejection(ref, kind, "empty_question", "the question is empty")
    if len(options) < 2:
        return Rejection(ref, kind, "too_few_options", f"{len(options)} option(s) filled, 2 needed")
    seen: dict[str, str] = {}
    for letter, text in zip(LETTERS, options, strict=False):
        if text.casefold() in seen:
            return Rejection(
                ref,
                kind,
                "duplicate_options",
                f"options {seen[text.casefold()]} and {letter} are both '{text}'",
            )
        seen[text.casefold()] = letter
    answer = answer.strip().upper()
    if not answer:
        return Rejection(ref, kind, "missing_answer", "the answer is empty")
    letters = LETTERS[: len(options)]
    written = _ANSWER.match(answer)  # "B", "B.", "(B)", "B)", "B:"
    answer = written.group(1) if written else answer
    if len(answer) != 1 or answer not in letters:
        return Rejection(
            ref,
            kind,
            "answer_not_in_options",
            f"answer '{answer}' is not one of the filled options {', '.join(letters)}",
        )
    hint = text_of(extra.pop("hint", None)).strip() or None
    category = text_of(extra.pop("category", None)).strip() or None
    l2 = text_of(extra.pop("l2-category", None) or extra.pop("l2_category", None)).strip() or None
    split = text_of(extra.pop("split", None)).strip() or None
    meta = {
        k: v if isinstance(v, str) else json.dumps(v, default=str)
        for k, v in extra.items()
        if v not in (None, "")
    }
    return SeedQuestion(
        ref, kind, image_source, question, hint, options, answer, category, l2, split, meta
    )
