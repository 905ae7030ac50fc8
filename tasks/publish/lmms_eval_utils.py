"""lmms-eval task functions for a benchfoundry release (copied into each release as
`lmms_eval/utils.py` by `lmms_eval_tasks.py`; it imports nothing of benchfoundry, so the
release runs in lmms-eval alone).

A question is asked as benchfoundry's evaluate asks it: its image, or for a question on a clip the
keyframes of its stretch (`video_frames`, files under the release's `frames/`); the prompt of its
language (the same text as `prompts/mcq.j2` and `mcq_zh.j2`); the reply read as one option's
letter, never guessed (a reply that commits to no single option is scored wrong and counted in
`unparsed`). The `_circular` tasks ask each question once per rotation of its options
(MMBench's CircularEval, rotated as benchfoundry rotates them): a question counts in
`circular_accuracy` only when every pass is right, and `accuracy` is its first pass, the options
in their published order."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from PIL import Image

RELEASE = Path(__file__).resolve().parent.parent  # the release folder this file lies in
LETTERS = "ABCDEFGHIJ"
PASS = "circular_pass"  # the column the circular tasks add: which rotation a row shows
FAILED = "[LMMS_EVAL_REQUEST_FAILED"  # what lmms-eval's API models answer for a failed call

# (hint line, question line, options line, instruction) per language; others ask in English.
PROMPTS = {
    "en": (
        "Hint: {}\n",
        "Question: {}\n",
        "Options:\n",
        "Answer with the option's letter from the given choices directly.",
    ),
    "zh": ("提示：{}\n", "问题：{}\n", "选项：\n", "请直接回答所给选项中正确选项的字母。"),
}

_BARE = re.compile(r"^\W*([A-Za-z])\W*$")  # "B", "(B)", "B.", "**B**"
_LEADING = re.compile(r"^[\(\[\*]*([A-Z])(?:[\)\]\*]+|[.:,]|\s*$)")  # "B. a cat", "(B) a cat"
_MARKED = re.compile(
    r"(?:answer\s*(?:is|:)|答案\s*(?:是|为|：|:)?)\s*[\(\[\*]*([A-Za-z])(?![A-Za-z])", re.I
)


def shown_options(doc: dict[str, Any]) -> tuple[list[str], list[int]]:
    """The options in the order this row shows them, and their indices in the published order
    (a circular row's pass k starts at option k)."""
    options = list(doc["options"])
    k = int(doc.get(PASS) or 0)
    order = [(i + k) % len(options) for i in range(len(options))]
    return [options[i] for i in order], order


def doc_to_visual(doc: dict[str, Any]) -> list[Image.Image]:
    """The question's image, or a clip question's keyframes in time order."""
    frames = doc.get("video_frames") or []
    if frames:
        return [Image.open(RELEASE / f).convert("RGB") for f in frames]
    return [doc["image"].convert("RGB")]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict | None = None) -> str:
    """The multiple-choice prompt in the row's language, its options as this row shows them."""
    hint, question, options, ask = PROMPTS.get(doc.get("language") or "en", PROMPTS["en"])
    shown, _ = shown_options(doc)
    text = (hint.format(doc["hint"]) if doc.get("hint") else "") + question.format(doc["question"])
    listed = "".join(
        f"{letter}. {option}\n" for letter, option in zip(LETTERS, shown, strict=False)
    )
    return text + options + listed + ask


def doc_to_target(doc: dict[str, Any]) -> str:
    """The right option's letter as this row shows the options."""
    _, order = shown_options(doc)
    return LETTERS[order.index(LETTERS.index(doc["answer"]))]


def letter_of(response: str | None, options: list[str]) -> str | None:
    """The one option letter a reply commits to, or None: a bare letter, a leading label
    ("B. ..."), "the answer is B" / "答案是B", or the text of exactly one option."""
    text = (response or "").strip()
    valid = LETTERS[: len(options)]
    if not text or text.startswith(FAILED):
        return None
    for pattern in (_BARE, _LEADING):
        if found := pattern.match(text):
            letter = found.group(1).upper()
            return letter if letter in valid else None
    marked = {m.group(1).upper() for m in _MARKED.finditer(text)}
    if marked:
        return marked.pop() if len(marked) == 1 and marked <= set(valid) else None
    lowered = text.lower()
    named = [
        L
        for L, o in zip(valid, options, strict=False)
        if o.strip() and o.strip().lower() in lowered
    ]
    return named[0] if len(named) == 1 else None


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    """A row's score under each metric of its task."""
    reply = results[0] if results else None
    shown, _ = shown_options(doc)
    letter = letter_of(reply if isinstance(reply, str) else getattr(reply, "text", None), shown)
    right = letter is not None and letter == doc_to_target(doc)
    unparsed = {"unparsed": {"unparsed": letter is None}}  # a count: no `score`, no stderr
    if PASS not in doc:  # asked once: `score` and `image_id` give lmms-eval's clustered stderr
        return {"accuracy": {"score": float(right), "image_id": doc["image_id"]}} | unparsed
    # one pass of several: no `score` key, so no per-pass stderr is taken for a question's metric
    item = {"question_id": doc["question_id"], "pass": int(doc[PASS]), "correct": right}
    return {"accuracy": item, "circular_accuracy": item} | unparsed


def circular_docs(dataset: Any) -> Any:
    """Each question once per rotation of its options (a `datasets.Dataset`, rows repeated,
    with the pass in `circular_pass`)."""
    counts = [len(o) for o in dataset["options"]]
    rows = [i for i, n in enumerate(counts) for _ in range(n)]
    passes = [k for n in counts for k in range(n)]
    return dataset.select(rows).add_column(PASS, passes)


def accuracy(items: list[dict[str, Any]]) -> float:
    """The share right on the first pass (the options in their published order)."""
    first = [i for i in items if i.get("pass", 0) == 0]
    return sum(bool(i.get("score", i.get("correct"))) for i in first) / max(len(first), 1)


def circular_accuracy(items: list[dict[str, Any]]) -> float:
    """The share of questions right on every pass (MMBench's CircularEval)."""
    passes: dict[str, list[bool]] = defaultdict(list)
    for i in items:
        passes[i["question_id"]].append(bool(i["correct"]))
    return sum(all(p) for p in passes.values()) / max(len(passes), 1)


def unparsed(items: list[dict[str, bool]]) -> int:
    """Replies that named no single option (scored wrong)."""
    return sum(i["unparsed"] for i in items)
