"""Deliberately broken inputs, one per quarantine reason, to show (and test) that ingestion
records every refusal with its reason instead of stopping or dropping it silently."""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path

from PIL import Image


def _png(size: tuple[int, int], colour: tuple[int, int, int] = (90, 140, 200)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def bomb_png(width: int = 9000, height: int = 8000) -> bytes:
    """A small file that declares width x height pixels (1-bit, so it compresses to a few KB)."""
    buffer = io.BytesIO()
    Image.new("1", (width, height), 0).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def write_faulty_images(folder: Path) -> dict[str, str]:
    """Write one bad image file per reason; return file name -> expected reason."""
    folder.mkdir(parents=True, exist_ok=True)
    good = _png((120, 90))
    files = {
        "empty.jpg": (b"", "empty_file"),
        "truncated.png": (good[: len(good) // 2], "truncated_image"),
        "notes.jpg": (b"these are meeting notes, saved with the wrong extension\n", "not_an_image"),
        "tiny.png": (_png((12, 9)), "too_small"),
        "bomb.png": (bomb_png(), "too_many_pixels"),
    }
    for name, (data, _) in files.items():
        (folder / name).write_bytes(data)
    return {name: reason for name, (_, reason) in files.items()}


def write_faulty_tsv(path: Path) -> dict[str, str]:
    """Write a VLMEvalKit MCQ TSV with one good row and one bad row per row-level reason;
    return row index -> expected reason ('' for the good rows)."""
    image = base64.b64encode(_png((96, 64), (200, 80, 60))).decode("ascii")
    header = ["index", "image", "question", "A", "B", "C", "D", "answer", "category"]
    rows = [
        (
            [
                "1",
                image,
                "What colour fills the image?",
                "red",
                "blue",
                "green",
                "white",
                "A",
                "colour",
            ],
            "",
        ),
        (["2", "1", "Is the image mostly one colour?", "yes", "no", "", "", "A", "colour"], ""),
        (["3", "!!not base64!!" * 8, "What is shown?", "a", "b", "c", "d", "B", "x"], "bad_base64"),
        (
            ["4", image, "Which option is right?", "a", "b", "c", "d", "E", "x"],
            "answer_not_in_options",
        ),
        (
            ["1", image, "A second row that reuses index 1?", "a", "b", "c", "d", "A", "x"],
            "duplicate_index",
        ),
        (["5", image, "   ", "a", "b", "c", "d", "A", "x"], "empty_question"),
        (
            ["6", "99", "Which row does this image come from?", "a", "b", "", "", "A", "x"],
            "bad_image_reference",
        ),
        (["7", image, "Which option is first?", "a", "", "c", "", "A", "x"], "option_gap"),
        (["8", image, "LATIN1_PLACEHOLDER", "a", "b", "c", "d", "A", "x"], "non_utf8"),
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(r for r, _ in rows)
    data = (
        buffer.getvalue()
        .encode("utf-8")
        .replace(b"LATIN1_PLACEHOLDER", "Qu'est-ce que c'est, caf\u00e9 ?".encode("latin-1"))
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {f"row {n}": reason for n, (_, reason) in enumerate(rows, start=2)}


def tiff_with_broken_second_frame() -> bytes:
    """A two-page TIFF whose second page's tags are zeroed: the first page decodes, reading the
    page count fails inside the decoder."""
    import struct

    frames = [Image.new("RGB", (64, 48), c) for c in ((200, 0, 0), (0, 200, 0))]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="TIFF", save_all=True, append_images=frames[1:])
    data = bytearray(buffer.getvalue())
    first = struct.unpack("<I", data[4:8])[0]
    entries = struct.unpack("<H", data[first : first + 2])[0]
    second = struct.unpack("<I", data[first + 2 + 12 * entries : first + 6 + 12 * entries])[0]
    for i in range(struct.unpack("<H", data[second : second + 2])[0]):
        data[second + 2 + 12 * i : second + 4 + 12 * i] = b"\x00\x00"
    return bytes(data)
