"""The evidence reader's reading of an image: the things in it and its lines of text.

The copy is smoothed within flat colours (a bilateral filter: noise, grain and JPEG's
speckle go, edges stay) and, where its backdrop is light pale paper, balanced so that the paper
is white (a lamp's warm light, a dim room). Pixels where the colour changes fast (`_edges`: a
blur's or JPEG's blended band between two colours) are left out of the pieces at first; each
flat piece then takes back those within `_GROW` pixels of it, and its outline is where its own
colour's name ends. Every pixel of a copy with its longer side `side` long is named with the reader's own colour
names (`colours`: the nearest CSS named colour in OKLab, unclear where two names are near).
Where the frame is mostly one colour, the pixels near it are the backdrop. Each colour's pixels
are opened with a 3 x 3 square (a blended edge or a hair-line one or two pixels wide goes) and
split into 4-connected pieces; pixels of unclear colour make pieces too, whose colour is `None`.
Pieces of one colour a pixel or two apart (a compression artefact's seam) are one, and pieces
under a thousandth of the image are crumbs, not things. Each piece is a `Thing` with its colour,
its shape word (`shapes`, OpenCV), its box, its area and its place (`place_word`), but for an
outline drawn around other pieces (a cartoon's black line: `_outline`), which is part of what it
surrounds, and a sliver with no shape along a larger piece (a drop shadow, a blended edge:
`_sliver`); a shapeless or round piece that is overlapping shapes is cut into them
(`shapes.overlapping`). A pale thing close to the paper's colour (`_faint`: a cream star on
white) is read apart, from the pixels beyond the paper's own noise but near its colour, where it
stands clear of every other piece. Tesseract reads the text (`text`); the pieces lying mostly
inside a line of text are its letters, not things."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image
from scipy import ndimage

from benchfoundry.evidence.colours import NAMES, UNCLEAR, colour_indexes, colour_word, oklab
from benchfoundry.evidence.shapes import overlapping, shape_word
from benchfoundry.evidence.text import Line, read_text

SIDE = 384  # the longer side of the copy the reader reads things from
_SQUARE = np.ones((3, 3), bool)
_BACKDROP = 0.06  # OKLab distance: pixels this near a plain frame's colour are the backdrop
_PLAIN = 0.6  # a frame is plain where this share of its pixels is near its median colour
_HOLLOW = 0.5  # a piece whose holes are this share of its filled shape may be an outline
_LARGER, _THIN = 3.0, 0.2  # a sliver: this many times smaller than, and thin against, its neighbour
_NEAR = 4  # pixels of the copy: a sliver this near a larger piece lies along it (JPEG fringes)
_CLEAR = 0.6  # a box's place is named where this share of it lies in one cell of the grid
_EDGE = 0.03  # OKLab change per pixel of the copy (smoothed): above it a pixel is a transition
_PAPER, _TINT = 0.6, 0.1  # OKLab lightness and chroma: a backdrop this light and pale is paper
_GRAIN = 30  # RGB levels: differences under this are smoothed away as noise, larger are edges
_OWN = 0.5  # a piece is outlined by its own colour's pixels where they are this share of it
_FAINT, _SPREAD = 0.02, 2.5  # OKLab: the backdrop's least reach, and its reach in frame spreads
_HALO = 8  # pixels of the copy: a faint thing lies this far or farther from any other piece
_FAINT_SHARE = 0.003  # of the copy's pixels: a faint thing is at least this large
_GROW = 4  # pixels of the copy: a piece takes back the transition pixels this near it


@dataclass(frozen=True)
class Thing:
    colour: str | None  # its basic colour name, None where the reader finds it unclear
    noun: str | None  # its shape's word, or None
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in the image's pixels
    area: int  # pixels, in the image's pixels
    position: str | None  # its place in a 3 x 3 grid ("top left" ... "center"), or None


@dataclass(frozen=True)
class Reading:
    things: list[Thing]
    size: tuple[int, int]
    background: str | None  # the frame's colour, None where the frame has no one colour
    text_lines: int = 0  # the lines of text read there, whose letters are left out of things
    texts: tuple[Line, ...] = field(default=())  # those lines: (text, box) each
    text_missing: str | None = None  # why no text could be read (no engine), or None

    def without(self, boxes: list[list[float]]) -> Reading:
        """The reading less the things lying mostly inside one of `boxes` (the letters of a
        line of text, which are not objects); `text_lines` counts `boxes`."""
        kept = [t for t in self.things if not any(_inside(t.box, box) for box in boxes)]
        return Reading(kept, self.size, self.background, len(boxes), self.texts, self.text_missing)


def _inside(box: tuple[float, ...], outer: list[float] | tuple[float, ...]) -> bool:
    x0, y0, x1, y1 = box
    w = max(0.0, min(x1, outer[2]) - max(x0, outer[0]))
    h = max(0.0, min(y1, outer[3]) - max(y0, outer[1]))
    return w * h >= 0.5 * max(1.0, (x1 - x0) * (y1 - y0))


_ROWS = ("top", "middle", "bottom")
_COLUMNS = ("left", "center", "right")


def place_word(box: tuple[float, float, float, float], width: int, height: int) -> str | None:
    """The cell of a 3 x 3 grid that holds `_CLEAR` of the box's area or more, in the words the
    templates use ("top left", "middle right", "center", "bottom center"...); None where the box
    straddles the grid's lines (a person could name two cells)."""
    x0, y0, x1, y1 = box
    area = max(1e-9, (x1 - x0) * (y1 - y0))
    best, cell = 0.0, (0, 0)
    for r in range(3):
        for c in range(3):
            w = min(x1, (c + 1) * width / 3) - max(x0, c * width / 3)
            h = min(y1, (r + 1) * height / 3) - max(y0, r * height / 3)
            share = max(0.0, w) * max(0.0, h) / area
            if share > best:
                best, cell = share, (r, c)
    if best < _CLEAR:
        return None
    row, column = _ROWS[cell[0]], _COLUMNS[cell[1]]
    if row == "middle":
        return "center" if column == "center" else f"middle {column}"
    return f"{row} {column}"


def _outline(mask: np.ndarray, owner: np.ndarray, number: int) -> bool:
    """Whether a piece is an outline drawn around other things (a cartoon's black line): its
    holes are most of its filled shape, and other pieces fill most of the holes. A ring has a
    hole too, but the backdrop fills it."""
    filled = ndimage.binary_fill_holes(mask)
    hole = filled & ~mask
    if hole.sum() < _HOLLOW * filled.sum():
        return False
    inside = owner[hole]
    return bool(np.mean((inside != 0) & (inside != number)) >= 0.5)


def _sliver(full: np.ndarray, owner: np.ndarray, number: int, areas: list[int]) -> bool:
    """Whether a piece with no shape is a sliver along a larger piece it touches (a drop
    shadow, a blended edge): at least `_LARGER` times smaller, and thin against it (its
    thickest point under `_THIN` of the larger piece's equivalent side)."""
    touching = np.unique(owner[ndimage.binary_dilation(full, iterations=_NEAR) & ~full])
    larger = [n for n in touching if n and n != number and areas[n - 1] >= _LARGER * full.sum()]
    if not larger:
        return False
    thickness = 2 * float(ndimage.distance_transform_edt(full).max())
    return thickness <= _THIN * np.sqrt(max(areas[n - 1] for n in larger))


def _regions(names: np.ndarray, colour: int, backdrop: np.ndarray) -> np.ndarray:
    """The 4-connected regions of one colour's pixels, opened with a 3 x 3 square, numbered."""
    opened = ndimage.binary_opening((names == colour) & ~backdrop, structure=_SQUARE)
    return ndimage.label(opened)[0]


def _own(full: np.ndarray, owner: np.ndarray, number: int, regions: np.ndarray) -> np.ndarray:
    """A piece's own colour's pixels: the regions of its colour it overlaps (a sharp corner's
    tip is a transition too, but of its colour), less what other pieces hold; the largest."""
    ids = np.unique(regions[full])
    own = np.isin(regions, ids[ids > 0]) & ((owner == 0) | (owner == number))
    labels, n = ndimage.label(own)
    if n <= 1:
        return own
    return labels == 1 + int(np.argmax(ndimage.sum(own, labels, range(1, n + 1))))


def _copy(image: Image.Image, side: int) -> tuple[np.ndarray, float]:
    rgb = image.convert("RGB")
    factor = side / max(rgb.size)
    if abs(factor - 1) > 1e-9:
        size = (max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor)))
        rgb = rgb.resize(size, Image.BOX if factor < 1 else Image.BICUBIC)
    # sensor noise and grain smoothed away within flat colours, edges kept (a bilateral filter)
    smooth = np.ascontiguousarray(np.asarray(rgb))
    for _ in range(2):
        smooth = cv2.bilateralFilter(smooth, 7, _GRAIN, 3)
    return smooth, factor


def _backdrop(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray, str | None]:
    """The backdrop's pixels (none where the frame is not plain), the faint pixels, and the
    frame's colour. The backdrop reaches `_SPREAD` times the frame's own spread about its
    colour (95th percentile: the paper's noise or grain, after smoothing), at least `_FAINT` and
    at most `_BACKDROP` (OKLab); faint pixels lie beyond that reach but within `_BACKDROP`: a
    cream star (245, 245, 220) on paper (250, 250, 250) is 0.039 from it."""
    frame = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    median = np.median(frame, axis=0)
    lab, centre = oklab(frame / 255), oklab(median / 255)
    spread = np.linalg.norm(lab - centre, axis=-1)
    if np.mean(spread < _BACKDROP) < _PLAIN:
        none = np.zeros(pixels.shape[:2], bool)
        return none, none, None
    reach = min(_BACKDROP, max(_FAINT, _SPREAD * float(np.percentile(spread, 95))))
    distance = np.linalg.norm(oklab(pixels / 255) - centre, axis=-1)
    faint = (distance >= reach) & (distance < _BACKDROP)
    return distance < reach, faint, colour_word(tuple(median))


def _balanced(pixels: np.ndarray, backdrop: np.ndarray) -> np.ndarray:
    """The copy as under white light, where its backdrop is light paper of little colour: each
    channel (linear light) scaled so that the paper is white (von Kries' adaptation, what a
    person's eye does under a lamp's warm light or in a dim room). Otherwise the copy as it is."""
    if not backdrop.any():
        return pixels
    paper = np.median(pixels[backdrop], axis=0) / 255
    lightness, a, b = oklab(paper)
    if lightness < _PAPER or math.hypot(a, b) > _TINT:
        return pixels
    rgb = pixels / 255
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    white = np.where(paper <= 0.04045, paper / 12.92, ((paper + 0.055) / 1.055) ** 2.4)
    linear = np.clip(linear / np.maximum(white, 1e-6), 0, 1)
    out = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    return (255 * out).round().astype(np.uint8)


def _edges(pixels: np.ndarray) -> np.ndarray:
    """The transition pixels of the copy: where its colour (OKLab, smoothed over a pixel)
    changes by more than `_EDGE` per pixel. A blurred or compressed edge blends the colours
    on its two sides into a band of colours that are neither (a red disc on white gets a pink
    ring); those bands are these pixels, whatever their colour's name."""
    lab = ndimage.gaussian_filter(oklab(pixels / 255), sigma=(1, 1, 0))
    change = np.zeros(pixels.shape[:2])
    for channel in range(3):
        dy = ndimage.sobel(lab[..., channel], axis=0) / 8
        dx = ndimage.sobel(lab[..., channel], axis=1) / 8
        change += dx * dx + dy * dy
    return np.sqrt(change) > _EDGE


def _pieces(
    names: np.ndarray, free: np.ndarray, min_area: float, owner: np.ndarray
) -> list[tuple[int, np.ndarray]]:
    """The pieces of one colour each among the `free` pixels: each colour's pixels opened with
    a 3 x 3 square and split into 4-connected pieces (pieces a pixel or two apart, across a
    compression artefact's seam, are one), crumbs under `min_area` left out. Each is numbered
    in `owner` after those already there; returns (colour, mask) of each."""
    out = []
    for colour in np.unique(names[free]):
        opened = ndimage.binary_opening((names == colour) & free, structure=_SQUARE)
        labels, _ = ndimage.label(ndimage.binary_closing(opened, structure=_SQUARE))
        labels[~opened] = 0
        for piece, box in enumerate(ndimage.find_objects(labels), start=1):
            if box is None or (labels[box] == piece).sum() < min_area:
                continue
            mask = labels == piece
            out.append((int(colour), mask))
            owner[mask] = owner.max() + 1
    return out


def _faint(
    faint: np.ndarray, changes: np.ndarray, owner: np.ndarray, least: float
) -> list[np.ndarray]:
    """The faint things: pieces of the `faint` pixels (beyond the backdrop's spread, but near
    its colour: a cream shape on white paper), whatever their colour's name (it wavers there),
    at least `least` pixels and `_HALO` pixels or more from any other piece (JPEG's ringing and a
    blur's pale fringe lie along things; a faint thing stands alone). `changes` are the copy's
    transition pixels (`_edges`)."""
    flat = ndimage.binary_opening(faint & ~changes, structure=_SQUARE)
    labels, _ = ndimage.label(flat)
    taken = ndimage.binary_dilation(owner > 0, iterations=_HALO)
    out = []
    for piece, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None:
            continue
        mask = labels == piece
        if mask.sum() >= least and not (taken & mask).any():
            out.append(ndimage.binary_fill_holes(mask))
    return out


def read_pixels(
    image: Image.Image, side: int = SIDE, min_share: float = 0.0003, text: bool = True
) -> Reading:
    """The things in `image`, largest first, and its lines of text (see the module's
    docstring); a thing covers `min_share` of the image or more (so that an enlarged picture
    holds the same things, and a compressed one no crumbs): a dot 10 px across in a 384 x 288
    drawing, whose flat inside is smaller still, is a thing (at 0.001 it was not, and every
    right key that counted it was doubted). `text=False` reads no text, and says so."""
    pixels, factor = _copy(image, side)
    backdrop, faint, background = _backdrop(pixels.astype(np.float64))
    backdrop = backdrop | faint  # the things of clear colour first, as on any paper
    pixels = _balanced(pixels, backdrop)
    names = colour_indexes(pixels)
    read = read_text(image) if text else None
    lines = read.lines if read is not None else ()
    missing = read.missing if read is not None else "text was not read (text=False)"
    min_area = min_share * names.size
    owner = np.zeros(names.shape, np.int32)  # which piece each pixel is in (0: none)
    changes = _edges(pixels)
    edge = changes & ~backdrop
    # the flat insides of things first; each takes back the transition pixels nearest it
    found = _pieces(names, ~backdrop & ~edge, min_area, owner)
    if found:
        distance, (rows, columns) = ndimage.distance_transform_edt(owner == 0, return_indices=True)
        near = edge & (distance <= _GROW)
        owner[near] = owner[rows[near], columns[near]]
    # transitions no thing took are read as pieces of their own (a line drawn a few pixels wide)
    found = [(c, owner == n) for n, (c, _) in enumerate(found, start=1)]
    found += _pieces(names, edge & (owner == 0), min_area, owner)
    pieces = []
    for colour, whole in found:
        box = ndimage.find_objects(whole.astype(np.int32))[0]
        pieces.append((colour, box, whole[box]))
    things = []
    regions: dict[int, np.ndarray] = {}
    for number, (colour, box, mask) in enumerate(pieces, start=1):
        ys, xs = box
        scaled = (xs.start / factor, ys.start / factor, xs.stop / factor, ys.stop / factor)
        if any(_inside(scaled, line.box) for line in lines):
            continue  # a letter of a line of text
        if _outline(mask, owner[box], number):
            continue  # a drawn outline around another thing, not a thing of its own
        full = np.zeros(names.shape, bool)
        full[box] = mask
        # its outline is where its own colour's name ends (a contour of the blend, smooth),
        # not where the transition pixels it took back end
        own = _own(
            full, owner, number, regions.setdefault(colour, _regions(names, colour, backdrop))
        )
        outline = own if own.sum() >= _OWN * full.sum() else full
        noun = shape_word(outline)
        if noun is None and _sliver(full, owner, number, [p[2].sum() for p in pieces]):
            continue  # a shadow or a blended edge along a larger thing
        parts = overlapping(outline) if noun in (None, "oval", "circle") else []
        parts = parts if len(parts) > 1 else [full]
        for part in parts:
            if len(parts) > 1:  # one of overlapping shapes: its own box and name
                ys, xs = ndimage.find_objects(part.astype(np.int32))[0]
                scaled = (xs.start / factor, ys.start / factor, xs.stop / factor, ys.stop / factor)
                noun = shape_word(part)
            things.append(
                Thing(
                    colour=None if colour == UNCLEAR else NAMES[colour],
                    noun=noun,
                    box=scaled,
                    area=int(part.sum() / factor**2),
                    position=place_word(scaled, image.width, image.height),
                )
            )
    # then the faint things standing apart from them
    for mask in _faint(faint, changes, owner, _FAINT_SHARE * names.size):
        ys, xs = ndimage.find_objects(mask.astype(np.int32))[0]
        scaled = (xs.start / factor, ys.start / factor, xs.stop / factor, ys.stop / factor)
        if any(_inside(scaled, line.box) for line in lines):
            continue  # a pale letter
        things.append(
            Thing(
                colour=colour_word(tuple(np.median(pixels[mask], axis=0))),
                noun=shape_word(mask),
                box=scaled,
                area=int(mask.sum() / factor**2),
                position=place_word(scaled, image.width, image.height),
            )
        )
    things.sort(key=lambda t: -t.area)
    return Reading(things, image.size, background, len(lines), tuple(lines), missing)
