"""Content-addressed identifiers: every id is a hash of what it names, so reruns are idempotent."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def image_id(data: bytes) -> str:
    """The id of an image: sha256 of its encoded bytes."""
    return sha256_hex(data)


def stable_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, the canonical form hashed by `content_hash`."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any, length: int = 64) -> str:
    """sha256 of the canonical JSON form of `value`, truncated to `length` hex characters."""
    return sha256_hex(stable_json(value).encode("utf-8"))[:length]


def question_id(image_id_: str, question: str, options: Sequence[str]) -> str:
    """The id of a multiple-choice question: a stable hash of its image, text and options.

    Whitespace at the ends is ignored so that formatting noise does not create new ids; the
    option order matters, since a rotated question is asked differently.
    """
    return content_hash(
        {"image": image_id_, "question": question.strip(), "options": [o.strip() for o in options]},
        length=32,
    )
