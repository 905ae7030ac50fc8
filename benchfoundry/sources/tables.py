"""Table sources: VLMEvalKit MCQ TSV files and Parquet files (MMStar's layout).

Each row gives an image (base64, bytes, a path, or a reference to another row's image) and a seed
question. A bad row becomes a rejection with its reason; a file that lacks a required column
fails as a whole with one error naming the column.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.reasons import Rejection
from benchfoundry.sources.cells import (
    MORE_LETTERS,
    check_option_list,
    duplicated,
    image_file,
    make_seed,
    parse_options,
    split_inline_options,
    text_of,
)
from benchfoundry.sources.items import RawImage, SeedQuestion, SourceFormatError, SourceItems
from benchfoundry.sources.models import ParquetSource, TsvSource

# VLMEvalKit: an `image` value this short is the index of the row whose image to use.
REFERENCE_MAX_LEN = 64
_SURROGATE = re.compile("[\udc80-\udcff]")


def _decode_base64(value: str) -> bytes:
    return base64.b64decode("".join(value.split()), validate=True)


def _tsv_rows(path: Path) -> tuple[list[tuple[int, dict[str, str]]], list[Rejection]]:
    """(line number, row) for each well-formed row; a rejection for each malformed one. Bytes
    that are not UTF-8 survive as surrogates, so the row can be refused by name later."""
    csv.field_size_limit(sys.maxsize)
    rows: list[tuple[int, dict[str, str]]] = []
    rejections: list[Rejection] = []
    try:
        with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            header = [h.strip() for h in next(reader, [])]
            if not header:
                raise SourceFormatError(f"TSV {path} is empty; expected a header row")
            if twice := duplicated(header):
                raise SourceFormatError(
                    f"TSV {path}: column(s) {', '.join(twice)} appear more than once in the "
                    "header; which one holds the data is ambiguous"
                )
            for column in ("index", "question", "answer", "A", "B"):
                if column not in header:
                    raise SourceFormatError(
                        f"TSV {path}: required column '{column}' is missing (found: {', '.join(header)})"
                    )
            if "image" not in header and "image_path" not in header:
                raise SourceFormatError(
                    f"TSV {path}: required column 'image' (or 'image_path') is missing"
                )
            last_line = reader.line_num
            for fields in reader:
                first, line, last_line = last_line + 1, reader.line_num, reader.line_num
                if not fields:
                    continue
                if line > first and any("\n" in f and "\t" in f for f in fields):
                    # A quoted field that holds tabs across lines: an unbalanced quote has
                    # swallowed the rows that follow it.
                    rejections.append(
                        Rejection(
                            f"{path}#line={first}",
                            "tsv",
                            "malformed_row",
                            f"lines {first}-{line} read as one row: an unbalanced quote?",
                        )
                    )
                    continue
                if len(fields) != len(header):
                    rejections.append(
                        Rejection(
                            f"{path}#line={line}",
                            "tsv",
                            "malformed_row",
                            f"{len(fields)} fields, the header has {len(header)}",
                        )
                    )
                    continue
                rows.append((line, dict(zip(header, fields, strict=True))))
    except OSError as exc:
        raise SourceFormatError(f"cannot read TSV {path}: {exc.strerror or exc}") from None
    except csv.Error as exc:
        raise SourceFormatError(f"TSV {path} cannot be parsed: {exc}") from None
    return rows, rejections


def read_tsv(source: TsvSource) -> SourceItems:
    """Rows of a VLMEvalKit MCQ TSV as images and seed questions."""
    path = source.path
    rows, rejections = _tsv_rows(path)
    items = SourceItems(rejections=rejections)
    if not rows and not rejections:
        _no_rows(items, str(path), "tsv")
    base = source.image_root or path.parent
    first_line: dict[str, int] = {}
    own_image: dict[str, str] = {}  # index -> source ref of the row that holds the image data
    pending: list[tuple[str, dict[str, str], str]] = []  # (ref, row, image ref or index)
    for line, row in rows:
        index = row["index"].strip()
        ref = f"{path}#index={index}"
        bad = next((c for c, v in row.items() if _SURROGATE.search(v)), None)
        if bad is not None:
            items.rejections.append(
                Rejection(
                    f"{path}#line={line}",
                    "tsv",
                    "non_utf8",
                    f"column '{bad}' holds bytes that are not UTF-8",
                )
            )
            continue
        if not index:
            items.rejections.append(
                Rejection(f"{path}#line={line}", "tsv", "missing_index", "the index is empty")
            )
            continue
        if index in first_line:
            items.rejections.append(
                Rejection(
                    f"{path}#line={line}",
                    "tsv",
                    "duplicate_index",
                    f"index {index} is already used on line {first_line[index]}",
                )
            )
            continue
        first_line[index] = line
        image_value = row.get("image", "").strip()
        image_path = row.get("image_path", "").strip()
        meta = {**source.meta, "index": index, "line": str(line)}
        if image_value.startswith("["):
            items.rejections.append(
                Rejection(ref, "tsv", "multiple_images", "the image field holds a list of images")
            )
            continue
        if image_value and len(image_value) > REFERENCE_MAX_LEN:
            try:
                data = _decode_base64(image_value)
            except (binascii.Error, ValueError) as exc:
                items.rejections.append(Rejection(ref, "tsv", "bad_base64", f"image field: {exc}"))
                continue
            items.images.append(RawImage(ref, "tsv", data=data, license=source.license, meta=meta))
            own_image[index] = ref
            pending.append((ref, row, ref))
        elif image_value:
            pending.append((ref, row, f"index:{image_value}"))
        elif image_path:
            file, problem = image_file(image_path, base)
            if problem is not None:
                items.rejections.append(Rejection(ref, "tsv", *problem))
                continue
            items.images.append(RawImage(ref, "tsv", path=file, license=source.license, meta=meta))
            own_image[index] = ref
            pending.append((ref, row, ref))
        else:
            items.rejections.append(
                Rejection(ref, "tsv", "missing_image", "neither 'image' nor 'image_path' is filled")
            )
    for ref, row, image in pending:
        if image.startswith("index:"):
            target = image.removeprefix("index:")
            if target not in own_image:
                items.rejections.append(
                    Rejection(
                        ref,
                        "tsv",
                        "bad_image_reference",
                        f"image refers to index {target}, which holds no image",
                    )
                )
                continue
            image = own_image[target]
        options, problem = parse_options(row)
        if problem:
            items.rejections.append(Rejection(ref, "tsv", *problem))
            continue
        known = {"index", "image", "image_path", "question", "answer", *LETTERS, *MORE_LETTERS}
        extra = {k: v for k, v in row.items() if k not in known}
        extra["index"] = row["index"].strip()
        seed = make_seed(ref, "tsv", image, row["question"], options, row["answer"], extra)
        (items.seeds if isinstance(seed, SeedQuestion) else items.rejections).append(seed)
    return items


def _image_from_parquet(
    value: Any, base: Path
) -> tuple[bytes | None, Path | None, tuple[str, str] | None]:
    """(bytes, path, problem) from a Parquet image value: binary, a {bytes, path} struct, base64
    text or a path inside `base`; the problem as (reason, detail)."""
    if isinstance(value, dict):
        data = value.get("bytes")
        if data not in (None, "", b""):
            return _image_from_parquet(data, base)
        if value.get("path"):
            file, problem = image_file(str(value["path"]), base)
            return None, file, problem
        if data is not None:  # empty bytes and no path: reported as an empty image
            return _image_from_parquet(data, base)
        return None, None, ("missing_image", "the image struct has neither bytes nor a path")
    if isinstance(value, bytes | bytearray):
        return bytes(value), None, None
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.startswith("["):
            return None, None, ("multiple_images", "the image value holds several images")
        if len(text) < 1024 and "\x00" not in text:
            candidate = Path(text) if Path(text).is_absolute() else base / text
            if candidate.is_file():
                file, problem = image_file(text, base)
                return None, file, problem
        try:
            return _decode_base64(text), None, None
        except (binascii.Error, ValueError):
            return (
                None,
                None,
                (
                    "bad_base64",
                    "the image string is not valid base64 nor an existing file",
                ),
            )
    if isinstance(value, list):
        return None, None, ("multiple_images", "the image value holds several images")
    if value is None or isinstance(value, str):
        return None, None, ("missing_image", "the image value is empty")
    return (
        None,
        None,
        (
            "bad_image_value",
            f"the image value is a {type(value).__name__} ({str(value)[:40]}); expected bytes, a "
            "{bytes, path} struct, base64 text or a file path",
        ),
    )


def read_parquet(source: ParquetSource) -> SourceItems:
    """Rows of a Parquet file with an image column as images and seed questions. Options come
    from an `options` list column, from letter columns A..J, or from the question text."""
    path = source.path
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise SourceFormatError(f"cannot read Parquet {path}: {exc}") from None
    names = parquet.schema_arrow.names
    if twice := duplicated(names):
        raise SourceFormatError(
            f"Parquet {path}: column(s) {', '.join(twice)} appear more than once; which one "
            "holds the data is ambiguous"
        )
    base = source.image_root or path.parent
    for column in ("question", "answer", source.image_column):
        if column not in names:
            raise SourceFormatError(
                f"Parquet {path}: required column '{column}' is missing (found: {', '.join(names)})"
            )
    items = SourceItems()
    seen: dict[str, int] = {}
    row_number = 0
    for batch in parquet.iter_batches(batch_size=256):
        for row in batch.to_pylist():
            row_number += 1
            index = text_of(row.get("index", row_number)).strip()
            if not index:
                items.rejections.append(
                    Rejection(
                        f"{path}#row={row_number}", "parquet", "missing_index", "the index is empty"
                    )
                )
                continue
            ref = f"{path}#index={index}"
            if index in seen:
                items.rejections.append(
                    Rejection(
                        f"{path}#row={row_number}",
                        "parquet",
                        "duplicate_index",
                        f"index {index} is already used by row {seen[index]}",
                    )
                )
                continue
            seen[index] = row_number
            data, file, problem = _image_from_parquet(row.get(source.image_column), base)
            if problem:
                items.rejections.append(Rejection(ref, "parquet", *problem))
                continue
            meta = {**source.meta, "index": index, "row": str(row_number)}
            items.images.append(
                RawImage(ref, "parquet", data=data, path=file, license=source.license, meta=meta)
            )
            question = text_of(row.get("question"))
            listed = row.get("options")
            if isinstance(listed, str) and listed.strip().startswith("["):
                with contextlib.suppress(json.JSONDecodeError):
                    listed = json.loads(listed)
            if isinstance(listed, list) or "A" in names:
                options, problem = (
                    check_option_list(listed) if isinstance(listed, list) else parse_options(row)
                )
                if problem:
                    items.rejections.append(Rejection(ref, "parquet", *problem))
                    continue
            else:
                inline = split_inline_options(question)
                question, options = inline if inline else (question, [])
            known = {
                "index",
                "question",
                "answer",
                "options",
                source.image_column,
                *LETTERS,
                *MORE_LETTERS,
            }
            extra = {k: v for k, v in row.items() if k not in known}
            extra["index"] = index
            seed = make_seed(
                ref, "parquet", ref, question, options, text_of(row.get("answer")), extra
            )
            (items.seeds if isinstance(seed, SeedQuestion) else items.rejections).append(seed)
    if row_number == 0:
        _no_rows(items, str(path), "parquet")
    return items


def _no_rows(items: SourceItems, source: str, kind: str) -> None:
    """A table source with nothing in it is said out loud: a quarantine row and a warning."""
    detail = "the file has a header (columns) and no rows: nothing was ingested from it"
    items.rejections.append(Rejection(source, kind, "no_rows", detail))
    items.warnings.append(f"{source}: {detail}")
