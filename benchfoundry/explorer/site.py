"""The explorer's one data shape and its writer (docs/tables.md, "The explorer's data").

A site is `index.html`, `explorer.css`, `explorer.js` (package data, copied as they are) and:

- `data/meta.js`: what was explored, the respondents (models), the filters' values, chunk counts;
- `data/rows-NNN.js`: the table, one row per item and language, `ROWS_PER_CHUNK` to a file;
- `data/items-NNN.js`: each item's page (every language, every pass of every model, analysis,
  evidence, review history), `ITEMS_PER_CHUNK` items to a file, loaded when a page opens;
- `media/thumbs/`, `media/images/`, `media/clips/`: files the pages show, lazy-loaded.

From `file://` a browser refuses `fetch()` of local files, so each data file is a script that
hands its JSON to the page: `BFDATA.put("rows",0,[...]);`. The page builds every element from
data with DOM calls and `textContent`, never markup, so text from data shows as text.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from PIL import Image

log = logging.getLogger(__name__)

ROWS_PER_CHUNK = 2000  # the table: loaded whole when the page opens
ITEMS_PER_CHUNK = 50  # item pages: one file is loaded when one of its items is opened
THUMB_PX = 128
STATIC = ("index.html", "explorer.css", "explorer.js")
FOLDER = "explore"  # the site's folder: inside a release, beside an evaluation's report.html
PREFIX = 'BFDATA.put("{kind}",{n},'
SUFFIX = ");\n"

# A respondent's outcome on one item, one letter per model in a row's `o`.
RIGHT, WRONG, UNPARSED, FAILED, NOT_ASKED = "R", "W", "U", "F", "-"
UNREAD = (None, "", "Z")  # an extracted choice that names no option


@dataclass
class Model:
    """One respondent: a model as evaluated (with what it sees), or one of the build's models."""

    label: str
    model: str
    source: str  # evaluation, or build (the quality-control judgements)
    in_build: list[str] = field(default_factory=list)  # its roles in building the release
    served_at: str | None = None  # an OpenAI-compatible server's scheme, host and port


@dataclass
class Pass:
    """One pass of one model on one item (CircularEval rotates the options between passes)."""

    index: int
    order: list[str]  # the letters shown, in the order shown
    response: str | None
    extracted: str | None
    correct: bool


@dataclass
class Text:
    question: str
    hint: str | None
    options: list[str]


@dataclass
class Item:
    """One item with its twins: what its page shows."""

    qid: str
    index: int | None
    dimension: str
    bin: str | None  # the difficulty bin (tough, hard, medium, easy)
    key: str
    texts: dict[str, Text]  # language -> text; `en` first
    image_id: str | None = None
    image: str | None = None  # site-relative paths
    thumb: str | None = None
    width: int | None = None
    height: int | None = None
    clip: dict[str, Any] | None = None  # {src, start, end}: the stretch the question may show
    release: dict[str, Any] = field(default_factory=dict)  # review state, hits, source...
    answers: dict[str, dict[int, list[Pass]]] = field(default_factory=dict)  # lang -> model
    failures: dict[str, dict[int, str]] = field(default_factory=dict)  # lang -> model -> reason
    analysis: dict[str, dict[str, Any]] = field(default_factory=dict)  # lang -> statistics
    evidence: list[str] = field(default_factory=list)  # what the key rests on, as written
    shapes: list[dict[str, Any]] = field(default_factory=list)  # {box, label}, image pixels
    reviews: list[dict[str, Any]] = field(default_factory=list)  # oldest first


@dataclass
class Site:
    title: str
    kind: str  # release, or evaluation
    name: str
    version: str | None
    models: list[Model]
    items: list[Item]
    notes: list[str] = field(default_factory=list)  # what the pages cannot show, and why
    links: dict[str, str] = field(default_factory=dict)  # label -> relative URL (the report)


def outcome(passes: Sequence[Pass] | None, failure: str | None) -> str:
    """Right only if every pass is right (CircularEval); a wrong pass whose reply named no
    option is unparsed; a failed call with no answer is failed; no row at all is not asked."""
    if not passes:
        return FAILED if failure else NOT_ASKED
    ordered = sorted(passes, key=lambda p: p.index)
    wrong = next((p for p in ordered if not p.correct), None)
    if wrong is None:
        return RIGHT
    return UNPARSED if wrong.extracted in UNREAD else WRONG


def _row(item: Item, language: str, n: int, models: int) -> dict[str, Any]:
    text = item.texts[language]
    answers = item.answers.get(language, {})
    failures = item.failures.get(language, {})
    stats = item.analysis.get(language, {})
    searched = " ".join([item.qid, text.question, text.hint or "", *text.options])
    return {
        "id": item.qid if language == "en" else f"{item.qid}@{language}",
        "q": item.qid,
        "n": n,  # the item's place: its page is in data/items-(n // ITEMS_PER_CHUNK).js
        "lang": language,
        "dim": item.dimension,
        "bin": item.bin,
        "key": item.key,
        "thumb": item.thumb,
        "clip": item.clip is not None,
        "text": text.question,
        "search": searched.lower(),
        "o": "".join(outcome(answers.get(m), failures.get(m)) for m in range(models)),
        "diff": stats.get("difficulty"),
        "disc": stats.get("discrimination"),
        "suspect": stats.get("suspect_kind") if stats.get("suspect") else None,
    }


def _detail(item: Item) -> dict[str, Any]:
    """An item's page as JSON values (shallow: the passes are already plain)."""
    out = {f.name: getattr(item, f.name) for f in fields(item)}
    out["texts"] = {lang: vars(t) for lang, t in item.texts.items()}
    out["answers"] = {
        lang: {str(m): [vars(p) for p in sorted(ps, key=lambda p: p.index)] for m, ps in by.items()}
        for lang, by in item.answers.items()
    }
    out["failures"] = {
        lang: {str(m): r for m, r in by.items()} for lang, by in item.failures.items()
    }
    return out


def _write(path: Path, data: bytes) -> None:
    """`data` to `path` under a temporary name, then renamed: never a torn file. Not synced one
    by one (thousands of media files): a release is synced whole before it is renamed into
    place, and an evaluation's explorer is written again by the next report."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _script(kind: str, n: int, value: Any) -> bytes:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (PREFIX.format(kind=kind, n=n) + body + SUFFIX).encode("utf-8")


def read_chunk(path: Path) -> Any:
    """The JSON value of one data file (the reverse of `_script`)."""
    text = path.read_text(encoding="utf-8")
    start = text.index(",", text.index(",") + 1) + 1
    return json.loads(text[start : -len(SUFFIX)])


def _languages(items: Iterable[Item]) -> list[str]:
    found = {lang for i in items for lang in i.texts}
    return ["en", *sorted(found - {"en"})] if "en" in found else sorted(found)


def write_site(site: Site, out: Path) -> Path:
    """Every file of the site into `out` (media already there stay); returns its index.html."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    for name in STATIC:
        _write(out / name, resources.files(__package__).joinpath("static", name).read_bytes())
    languages = _languages(site.items)
    rows = [
        _row(item, lang, n, len(site.models))
        for n, item in enumerate(site.items)
        for lang in languages
        if lang in item.texts
    ]
    row_chunks = [rows[i : i + ROWS_PER_CHUNK] for i in range(0, len(rows), ROWS_PER_CHUNK)]
    for n, chunk in enumerate(row_chunks):
        _write(data / f"rows-{n:03d}.js", _script("rows", n, chunk))
    item_chunks = range(0, len(site.items), ITEMS_PER_CHUNK)
    for n, start in enumerate(item_chunks):  # one chunk's JSON at a time
        chunk = [_detail(i) for i in site.items[start : start + ITEMS_PER_CHUNK]]
        _write(data / f"items-{n:03d}.js", _script("items", n, chunk))
    meta = {
        "title": site.title,
        "kind": site.kind,
        "name": site.name,
        "version": site.version,
        "models": [asdict(m) for m in site.models],
        "languages": languages,
        "dimensions": sorted({i.dimension for i in site.items}),
        "bins": [
            b for b in ("tough", "hard", "medium", "easy") if any(i.bin == b for i in site.items)
        ],
        "items": len(site.items),
        "rows": len(rows),
        "row_chunks": len(row_chunks),
        "item_chunks": len(item_chunks),
        "items_per_chunk": ITEMS_PER_CHUNK,
        "notes": site.notes,
        "links": site.links,
    }
    _write(data / "meta.js", _script("meta", 0, meta))
    return out / "index.html"


class Media:
    """The files the pages show, written once each under `out/media/`."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seen: dict[str, tuple[str, str, int, int]] = {}
        (out / "media" / "thumbs").mkdir(parents=True, exist_ok=True)
        (out / "media" / "images").mkdir(parents=True, exist_ok=True)

    def image(self, image_id: str, data: bytes, name: str | None) -> tuple[str, str, int, int]:
        """(image, thumbnail, width, height) of an image, its files written the first time."""
        if image_id in self.seen:
            return self.seen[image_id]
        ext = Path(name or "").suffix.lower() or ".png"
        full = f"media/images/{image_id}{ext}"
        thumb = f"media/thumbs/{image_id}.jpg"
        _write(self.out / full, data)
        with Image.open(io.BytesIO(data)) as im:
            width, height = im.size
            im.draft("RGB", (THUMB_PX, THUMB_PX))  # a JPEG decodes at a fraction of its size
            small = im.convert("RGB")
            small.thumbnail((THUMB_PX, THUMB_PX))
            buffer = io.BytesIO()
            small.save(buffer, "JPEG", quality=75)
        _write(self.out / thumb, buffer.getvalue())
        self.seen[image_id] = (full, thumb, width, height)
        return self.seen[image_id]

    def clip(self, source: Path) -> str:
        """The site-relative path of a clip file, copied into `media/clips/`."""
        target = self.out / "media" / "clips" / source.name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return f"media/clips/{source.name}"
