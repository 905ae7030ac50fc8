"""The evidence reader's own text reading: Tesseract (Debian's `tesseract-ocr`, an LSTM
recogniser of another family than the PaddleOCR models that write the key), driven through
`pytesseract`. A line is the words Tesseract groups into one line, each read with a
confidence of `MIN_CONFIDENCE` or more, holding a letter or digit and drawn in strokes (`_solid`:
Tesseract reads a row of filled circles, squares and triangles as "OHA"); its box is in the image's pixels.

Where the `tesseract` program is missing, nothing is read and the reason says so
(`TextReading.missing`): the reader then abstains on what text would decide, and the QC summary
counts it; it never reads "no text" from an engine that did not run."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np
from PIL import Image

MIN_CONFIDENCE = 70.0  # Tesseract's word confidence (0..100): below it a word is not read
MAX_SOLID = 0.1  # a "word" more solid than this (`_solid`) is filled shapes, not letters
_CORE = 0.6  # ink is what differs from the paper by this share of the most that differs
_SIDE = 1200  # the longer side Tesseract reads at (small pictures enlarged: it wants tall letters)
MISSING = "Tesseract is not installed (Debian's tesseract-ocr; scripts/setup.sh installs it)"


class Line(NamedTuple):
    """A line of text: its words and its box (x0, y0, x1, y1) in the image's pixels."""

    text: str
    box: tuple[float, float, float, float]


@dataclass(frozen=True)
class TextReading:
    lines: tuple[Line, ...]
    missing: str | None = None  # why no text was read at all (no engine), or None


def _solid(pixels: np.ndarray, box: tuple[int, int, int, int]) -> float:
    """The share of a word's ink (what differs from the colour around its box by `_CORE` of the
    most, at least 60 levels) that is solid:
    left after eroding it by a sixth of the box's height. Letters are strokes and vanish; a
    filled shape that Tesseract read as a letter stays."""
    x, y, w, h = box
    crop = pixels[max(0, y - 1) : y + h + 1, max(0, x - 1) : x + w + 1]
    if crop.size == 0:
        return 1.0
    edge = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
    distance = np.linalg.norm(crop - np.median(edge, axis=0), axis=-1)
    # the ink's core: a blur fattens strokes with their blended edges, which are not ink
    core = max(60.0, _CORE * float(np.percentile(distance, 99)))
    ink = (distance > core).astype(np.uint8)
    k = max(1, h // 6)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * k + 1, 2 * k + 1))
    return float(cv2.erode(ink, kernel).sum() / max(1, ink.sum()))


def available() -> bool:
    """Whether the Tesseract program is on the path."""
    return shutil.which("tesseract") is not None


def read_text(image: Image.Image) -> TextReading:
    """The lines of text Tesseract reads in `image` (see the module's docstring)."""
    if not available():
        return TextReading((), MISSING)
    import pytesseract

    rgb = image.convert("RGB")
    factor = _SIDE / max(rgb.size)
    if factor > 1:
        rgb = rgb.resize((round(rgb.width * factor), round(rgb.height * factor)), Image.LANCZOS)
    else:
        factor = 1.0
    data = pytesseract.image_to_data(rgb, lang="eng", output_type=pytesseract.Output.DICT)
    pixels = np.asarray(rgb).astype(np.float32)
    grouped: dict[tuple[int, int, int], list[int]] = {}
    for i, word in enumerate(data["text"]):
        box = (data["left"][i], data["top"][i], data["width"][i], data["height"][i])
        if (
            float(data["conf"][i]) >= MIN_CONFIDENCE
            and any(ch.isalnum() for ch in word)
            and _solid(pixels, box) <= MAX_SOLID
        ):
            line = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
            grouped.setdefault(line, []).append(i)
    lines = []
    for words in grouped.values():
        x0 = min(data["left"][i] for i in words)
        y0 = min(data["top"][i] for i in words)
        x1 = max(data["left"][i] + data["width"][i] for i in words)
        y1 = max(data["top"][i] + data["height"][i] for i in words)
        text = " ".join(data["text"][i].strip() for i in words)
        lines.append(Line(text, (x0 / factor, y0 / factor, x1 / factor, y1 / factor)))
    return TextReading(tuple(lines))
