"""Invariance: a change a person would not notice must not change the questions or their keys.

Each picture is written once as given (`as_given`, PNG) and once per variant: the EXIF
orientations 2-8 (pixels stored turned, the tag saying how to show them, as phone cameras write
them; orientation 1 is the upright JPEG itself), resized to a quarter and to four times its
size, re-encoded (JPEG 90, WebP, BMP, GIF, TIFF, CMYK JPEG, palette PNG, RGBA with a transparent
background) and padded with a margin of its own border's colour. All of them go through ingest, extract and the
template generator in one run folder; each variant's questions are then compared with the
picture's own: the share of its items asked again (the same question with the same options, in
any order), and among those the share whose key is the same answer. A margin moves things in
the frame, so the questions that name a place in it (`kinds.IN_FRAME`: "the object at the middle
left", "where in the image") may change with it; those that name none must not. No truth is needed, so it runs on any picture, photographs included.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from benchfoundry.core.letters import index_of
from benchfoundry.core.records import CandidateRecord, ImageSourceRecord
from benchfoundry.extractors.shapes import SUBPIXEL_SIDE
from benchfoundry.meaning.kinds import IN_FRAME, KINDS
from benchfoundry.storage.tables import RunFolder

BASE = "as_given"
SEPARATOR = "~"  # file names are <picture>~<variant>.<suffix>

# How a viewer is told to show stored pixels (EXIF orientation), and so what turn of the
# upright picture a camera stores for each value: showing the stored pixels undoes it.
_STORED_AS: dict[int, Image.Transpose] = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}


def _save(image: Image.Image, fmt: str, **kwargs: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **kwargs)
    return out.getvalue()


def exif_rotated(image: Image.Image, orientation: int, quality: int = 95) -> bytes:
    """A JPEG as a phone writes it: the pixels stored turned, the EXIF tag saying how to show
    them (orientation 1: upright pixels, tagged 1)."""
    stored = image.transpose(_STORED_AS[orientation]) if orientation in _STORED_AS else image
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _save(stored.convert("RGB"), "JPEG", quality=quality, exif=exif.tobytes())


def _resized(image: Image.Image, factor: float) -> bytes:
    size = (max(1, round(image.width * factor)), max(1, round(image.height * factor)))
    return _save(image.resize(size, Image.Resampling.LANCZOS), "PNG")


def _transparent(image: Image.Image) -> bytes:
    """The picture's white background made fully transparent (an RGBA PNG a slide tool or an
    icon exporter writes); painted on white it is the picture again."""
    rgba = image.convert("RGBA")
    pixels = [
        (r, g, b, 0) if (r, g, b) == (255, 255, 255) else (r, g, b, a)
        for r, g, b, a in rgba.getdata()
    ]
    rgba.putdata(pixels)
    return _save(rgba, "PNG")


def _margin(image: Image.Image, share: float = 0.1) -> bytes:
    """The picture padded on every side by a tenth of its size, in the colour of its own border
    (the commonest colour of its outermost pixels), as a person pads a picture."""
    rgb = image.convert("RGB")
    edge = [rgb.getpixel((x, y)) for x in range(rgb.width) for y in (0, rgb.height - 1)]
    edge += [rgb.getpixel((x, y)) for y in range(rgb.height) for x in (0, rgb.width - 1)]
    background = Counter(edge).most_common(1)[0][0]
    pad_x, pad_y = round(image.width * share), round(image.height * share)
    padded = Image.new("RGB", (image.width + 2 * pad_x, image.height + 2 * pad_y), background)
    padded.paste(rgb, (pad_x, pad_y))
    return _save(padded, "PNG")


Variant = tuple[str, Callable[[Image.Image], bytes]]  # (file suffix, writer)

VARIANTS: dict[str, Variant] = {
    BASE: ("png", lambda im: _save(im.convert("RGB"), "PNG")),
    **{f"exif{o}": ("jpg", lambda im, o=o: exif_rotated(im, o)) for o in range(1, 9)},
    "quarter": ("png", lambda im: _resized(im, 0.25)),
    "four_times": ("png", lambda im: _resized(im, 4.0)),
    "jpeg90": ("jpg", lambda im: _save(im.convert("RGB"), "JPEG", quality=90)),
    "webp": ("webp", lambda im: _save(im.convert("RGB"), "WEBP", quality=90)),
    "bmp": ("bmp", lambda im: _save(im.convert("RGB"), "BMP")),
    "gif": ("gif", lambda im: _save(im.convert("RGB").convert("P", palette=1), "GIF")),
    "tiff": ("tif", lambda im: _save(im.convert("RGB"), "TIFF")),
    "cmyk_jpeg": ("jpg", lambda im: _save(im.convert("CMYK"), "JPEG", quality=95)),
    "palette_png": ("png", lambda im: _save(im.convert("RGB").convert("P", palette=1), "PNG")),
    "transparent_png": ("png", _transparent),
    "margin": ("png", _margin),
}


def write_variants(
    pictures: dict[str, Image.Image], folder: Path, variants: list[str] | None = None
) -> int:
    """Every picture as given and in each variant, as `folder/<picture>~<variant>.<suffix>`;
    the number of files written."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [BASE, *(v for v in (variants or list(VARIANTS)) if v != BASE)]
    for picture, image in pictures.items():
        for name in names:
            suffix, write = VARIANTS[name]
            (folder / f"{picture}{SEPARATOR}{name}.{suffix}").write_bytes(write(image))
    return len(pictures) * len(names)


@dataclass
class VariantOutcome:
    """One variant over every picture: the pictures' own questions, how many were asked of the
    variant too, how many of those kept their key, and the questions only the variant asked."""

    questions: int = 0
    kept: int = 0
    keys_same: int = 0
    new: int = 0
    changed: list[str] = field(default_factory=list)  # "picture: question: key -> key"
    lost: list[str] = field(default_factory=list)  # "picture: question", not asked of it
    in_frame: int = 0  # of `questions`, those naming a place in the frame (`kinds.IN_FRAME`)
    in_frame_kept: int = 0
    legible: int = 0  # of `questions`, those of pictures the variant leaves legible (`legible`)
    legible_kept: int = 0

    @property
    def kept_share(self) -> float:
        return self.kept / self.questions if self.questions else 1.0

    @property
    def frame_free_share(self) -> float:
        """The share kept of the questions that name no place in the frame: what a margin,
        which moves things in the frame, must keep."""
        free = self.questions - self.in_frame
        return (self.kept - self.in_frame_kept) / free if free else 1.0

    @property
    def legible_share(self) -> float:
        """The share kept of the questions of pictures whose every shape and line of text the
        variant leaves large enough to read (`legible`)."""
        return self.legible_kept / self.legible if self.legible else 1.0

    @property
    def key_share(self) -> float:
        return self.keys_same / self.kept if self.kept else 1.0


@dataclass
class Invariance:
    pictures: int = 0
    asked_pictures: int = 0  # pictures whose own version got at least one question
    by_variant: dict[str, VariantOutcome] = field(default_factory=dict)


Item = tuple[str, str, frozenset[str]]  # (template, question, its options in any order)

# A variant that shrinks a picture can take away what a person needs to answer: a disc under
# `shapes.SUBPIXEL_SIDE` px across may as well be an octagon, and letters of a font under
# `TEXT_FLOOR` px are read differently by the two OCR engines (the 26 px font of the bench's
# text drawings is 6.5 px at a quarter of the size). Where a corpus's truth says how small a
# drawing's smallest shape and font are, the bench also gives each variant's share kept over
# the pictures it leaves legible, beside the share over all of them.
TEXT_FLOOR = 8.0
SCALE = {"quarter": 0.25, "four_times": 4.0}  # the variants that resize: by how much


def smallest(truth: Path, prefix: str = "") -> dict[str, tuple[float, float]]:
    """Each drawing of a corpus (`prefix` + its file's stem) -> its smallest shape (the shorter
    side of its box) and its smallest font, in pixels as drawn (infinite where it has none), from
    the corpus's `truth.jsonl`."""
    out = {}
    for line in truth.read_text(encoding="utf-8").splitlines():
        scene = json.loads(line)
        sides = [
            min(o["box"][2] - o["box"][0], o["box"][3] - o["box"][1]) for o in scene["objects"]
        ]
        fonts = [t["font_size"] for t in scene.get("text_lines", [])]
        out[prefix + Path(scene["file"]).stem] = (
            float(min(sides, default=math.inf)),
            float(min(fonts, default=math.inf)),
        )
    return out


def legible(sizes: dict[str, tuple[float, float]], picture: str, variant: str) -> bool:
    """Whether the variant leaves the picture's smallest shape `shapes.SUBPIXEL_SIDE` px across
    or more and its smallest font `TEXT_FLOOR` px or more (a picture without truth: yes)."""
    shape, font = sizes.get(picture, (math.inf, math.inf))
    scale = SCALE.get(variant, 1.0)
    return shape * scale >= SUBPIXEL_SIDE and font * scale >= TEXT_FLOOR


def _keys(candidates: list[CandidateRecord]) -> dict[Item, str]:
    """Each template item (its question and its set of options: the same question offered with
    other options is another item) -> the key's option text."""
    return {
        (c.generator, c.question, frozenset(c.options)): c.options[index_of(c.answer)]
        for c in candidates
        if c.generator.startswith("template:")
    }


def _in_frame(generator: str) -> bool:
    """Whether a template's questions name a place in the frame (`kinds.IN_FRAME`)."""
    kind = KINDS.get(generator.removeprefix("template:"))
    return kind is not None and IN_FRAME in kind.asks


def compare(run: RunFolder, readable: Callable[[str, str], bool] | None = None) -> Invariance:
    """Each variant's template questions and keys against its picture's own (`as_given`);
    `readable(picture, variant)` says which pictures a variant leaves legible (all, without)."""
    origin_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for link in run.table(ImageSourceRecord).records():
        name = Path(link.source).stem
        if SEPARATOR in name:
            picture, variant = name.rsplit(SEPARATOR, 1)
            origin_of[link.image_id].append((picture, variant))
    asked: dict[tuple[str, str], list[CandidateRecord]] = defaultdict(list)
    for candidate in run.table(CandidateRecord).records():
        for origin in origin_of.get(candidate.image_id, []):
            asked[origin].append(candidate)
    pictures = sorted({p for origins in origin_of.values() for p, _ in origins})
    variants = sorted({v for origins in origin_of.values() for _, v in origins} - {BASE})
    result = Invariance(pictures=len(pictures))
    for picture in pictures:
        base = _keys(asked.get((picture, BASE), []))
        result.asked_pictures += bool(base)
        for variant in variants:
            outcome = result.by_variant.setdefault(variant, VariantOutcome())
            other = _keys(asked.get((picture, variant), []))
            outcome.questions += len(base)
            outcome.new += len(set(other) - set(base))
            clear = readable is None or readable(picture, variant)
            for question, key in base.items():
                framed = _in_frame(question[0])
                outcome.in_frame += framed
                outcome.legible += clear
                if question not in other:
                    outcome.lost.append(f"{picture}: {question[1]}")
                    continue
                outcome.kept += 1
                outcome.in_frame_kept += framed
                outcome.legible_kept += clear
                if other[question] == key:
                    outcome.keys_same += 1
                else:
                    outcome.changed.append(
                        f"{picture}: {question[1]} {key!r} -> {other[question]!r}"
                    )
    return result


def not_kept(run: RunFolder) -> Counter[str]:
    """Per variant, the pictures whose file ingest refused (a variant that could not even be
    read keeps nothing)."""
    from benchfoundry.core.records import QuarantineRecord

    refused: Counter[str] = Counter()
    for row in run.table(QuarantineRecord).records():
        name = Path(row.source).stem
        if SEPARATOR in name and row.stage == "ingest":
            refused[name.rsplit(SEPARATOR, 1)[1]] += 1
    return refused
