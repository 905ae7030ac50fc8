"""The files of a release: Parquet shards whose schema carries Hugging Face `datasets` features
(the `image` column is a `datasets.Image()` feature, so `load_dataset("parquet", ...)` gives PIL
images with no cast), and VLMEvalKit's MCQ TSV. Images are read from the run once, a batch at a
time, into a spool folder beside the release being written, so memory stays bounded however many
questions a release has."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchfoundry.core.imaging import ImageLimits, ImageRejected, decode
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import ImageRecord
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.rows import SPLIT, ReleaseRow

MIN_LETTERS = 4  # A..D are always columns (MMStar's layout), more when a question needs them
META_FIELDS = (
    "source",
    "split",
    "image_source",
    "image_format",
    "license",
    "generator",
    "prompt_id",
    "prompt_hash",
    "video_source",  # a clip question's source clip, by its name in the source
)
EXTENSIONS = {
    "JPEG": "jpg",
    "PNG": "png",
    "GIF": "gif",
    "BMP": "bmp",
    "TIFF": "tiff",
    "WEBP": "webp",
}


def letter_columns(rows: Sequence[ReleaseRow]) -> str:
    return LETTERS[: max([MIN_LETTERS, *(len(r.options) for r in rows)])]


# --- images -----------------------------------------------------------------------------------


def spool_images(run: RunFolder, wanted: set[str], folder: Path) -> dict[str, str | None]:
    """Copy the wanted images' bytes to `folder/<image_id>`, decoding each in full; image id ->
    None when it decodes, or why it does not."""
    folder.mkdir(parents=True, exist_ok=True)
    problems: dict[str, str | None] = {}
    limits = ImageLimits(min_side=1)
    for batch in run.table(ImageRecord).batches(["image_id", "bytes"], batch_size=32):
        ids = batch.column("image_id").to_pylist()
        for i, image_id in enumerate(ids):
            if image_id not in wanted or image_id in problems:
                continue
            data = batch.column("bytes")[i].as_py()
            (folder / image_id).write_bytes(data)
            try:
                decode(data, limits)
                problems[image_id] = None
            except ImageRejected as exc:
                problems[image_id] = f"{exc.reason}: {exc.detail}"
    for image_id in wanted - set(problems):
        problems[image_id] = "not in the run's images table"
    return problems


def copy_frames(rows: Sequence[ReleaseRow], spool: Path, release: Path) -> None:
    """The keyframes the rows' clips carry, from the spool to `release/frames/<id>.png`."""
    for path in sorted({f for r in rows for f in r.video_frames}):
        target = release / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((spool / Path(path).stem).read_bytes())


def _image_bytes(folder: Path, image_id: str) -> bytes:
    return (folder / image_id).read_bytes()


# --- Parquet ----------------------------------------------------------------------------------


def _value(dtype: str) -> dict[str, str]:
    return {"dtype": dtype, "_type": "Value"}


def _sequence(dtype: str) -> dict[str, Any]:
    # `Sequence` (not the newer `List`) so that older `datasets` versions read it too.
    return {"feature": _value(dtype), "_type": "Sequence"}


def columns(letters: str) -> list[tuple[str, pa.DataType, Any]]:
    """(name, Arrow type, `datasets` feature) of every release column, in order."""
    text = pa.string()
    cols: list[tuple[str, pa.DataType, Any]] = [
        ("index", pa.int64(), _value("int64")),
        ("question", text, _value("string")),
        ("image", pa.struct([("bytes", pa.binary()), ("path", text)]), {"_type": "Image"}),
        ("answer", text, _value("string")),
        ("category", text, _value("string")),
        ("l2_category", text, _value("string")),
        (
            "meta_info",
            pa.struct([(f, text) for f in META_FIELDS]),
            {f: _value("string") for f in META_FIELDS},
        ),
        ("options", pa.list_(text), _sequence("string")),
    ]
    cols += [(letter, text, _value("string")) for letter in letters]
    cols += [
        ("hint", text, _value("string")),
        ("dimension", text, _value("string")),
        ("hits_text", pa.int64(), _value("int64")),
        ("hits_vlm", pa.int64(), _value("int64")),
        ("difficulty", text, _value("string")),
        ("source", text, _value("string")),
        ("image_id", text, _value("string")),
        ("question_id", text, _value("string")),
        ("reviewers", pa.list_(text), _sequence("string")),
        ("review_decision", text, _value("string")),
        ("review_state", text, _value("string")),
        ("human_reviewed", pa.bool_(), _value("bool")),
        ("review_changes", pa.list_(text), _sequence("string")),
        # A temporal question's clip (a file beside the data, as VLMEvalKit's video datasets
        # keep them) holding only the stretch the question may show, so `video_start` is 0 and
        # `video_end` its duration; the source clip and the stretch in it (`clip_*`); null for
        # an image's question.
        ("video", text, _value("string")),
        ("video_start", pa.float64(), _value("float64")),
        ("video_end", pa.float64(), _value("float64")),
        ("video_frames", pa.list_(text), _sequence("string")),
        ("clip_id", text, _value("string")),
        ("clip_start", pa.float64(), _value("float64")),
        ("clip_end", pa.float64(), _value("float64")),
        ("language", text, _value("string")),
    ]
    return cols


def features(letters: str) -> dict[str, Any]:
    return {name: feature for name, _, feature in columns(letters)}


def schema(letters: str) -> pa.Schema:
    metadata = {"huggingface": json.dumps({"info": {"features": features(letters)}})}
    return pa.schema([pa.field(n, t) for n, t, _ in columns(letters)], metadata=metadata)


def row_dict(row: ReleaseRow, image: bytes, letters: str) -> dict[str, Any]:
    ext = EXTENSIONS.get(row.image_format.upper(), row.image_format.lower())
    out: dict[str, Any] = {
        "index": row.index,
        "question": row.question,
        "image": {"bytes": image, "path": f"{row.image_id}.{ext}"},
        "answer": row.answer,
        "category": row.category,
        "l2_category": row.l2_category,
        "meta_info": {
            "source": row.source,
            "split": SPLIT,
            "image_source": row.image_source,
            "image_format": row.image_format,
            "license": row.license,
            "generator": row.generator,
            "prompt_id": row.prompt_id,
            "prompt_hash": row.prompt_hash,
            "video_source": row.video_source,
        },
        "options": row.options,
    }
    for i, letter in enumerate(letters):
        out[letter] = row.options[i] if i < len(row.options) else None
    for name in (
        "hint",
        "dimension",
        "hits_text",
        "hits_vlm",
        "difficulty",
        "source",
        "image_id",
        "question_id",
        "reviewers",
        "review_decision",
        "review_state",
        "human_reviewed",
        "review_changes",
        "video",
        "video_start",
        "video_end",
        "video_frames",
        "clip_id",
        "clip_start",
        "clip_end",
        "language",
    ):
        out[name] = getattr(row, name)
    return out


def shard_names(rows: int, per_file: int) -> list[str]:
    n = max(1, -(-rows // per_file))
    return [f"test-{i:05d}-of-{n:05d}.parquet" for i in range(n)]


def _chunks(rows: Sequence[ReleaseRow], size: int) -> Iterator[Sequence[ReleaseRow]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def write_parquet(
    rows: Sequence[ReleaseRow],
    images: Path,
    data: Path,
    rows_per_file: int,
    row_group_rows: int,
) -> list[Path]:
    """`data/test-0000i-of-0000N.parquet`, a row group of `row_group_rows` at a time."""
    data.mkdir(parents=True, exist_ok=True)
    letters = letter_columns(rows)
    target = schema(letters)
    paths = []
    for name, shard in zip(
        shard_names(len(rows), rows_per_file), _chunks(rows, rows_per_file), strict=True
    ):
        path = data / name
        with pq.ParquetWriter(path, target) as writer:
            for group in _chunks(shard, row_group_rows):
                table = pa.Table.from_pylist(
                    [row_dict(r, _image_bytes(images, r.image_id), letters) for r in group],
                    schema=target,
                )
                writer.write_table(table, row_group_size=row_group_rows)
        paths.append(path)
    return paths


# --- VLMEvalKit TSV ---------------------------------------------------------------------------


def tsv_name(name: str, language: str, bilingual: bool) -> str:
    """A language's TSV file name, as VLMEvalKit names a bilingual set's files (MMBench_DEV_EN,
    MMBench_DEV_CN): `<name>.tsv` for a release in one language."""
    if not bilingual:
        return f"{name}.tsv"
    return f"{name}{ {'en': '_EN', 'zh': '_CN'}.get(language, '_' + language.upper()) }.tsv"


def tsv_columns(letters: str, videos: bool = False) -> list[str]:
    """The TSV's header; with `videos`, `image_path` (the file names VLMEvalKit gives a row's
    images, needed where `image` is a list) and VLMEvalKit's video datasets' `video` column (the
    stretch's file beside the TSV) with the stretch in it (from 0 to its duration)."""
    return [
        "index",
        "question_id",
        "image",
        "question",
        "hint",
        *letters,
        "answer",
        "category",
        "l2-category",
        "split",
        *(["image_path", "video", "video_start", "video_end"] if videos else []),
    ]


def _cell(text: str) -> str:
    """A TSV cell: line ends as '\\n' (quoted by the writer); a bare '\\r' would end the row
    for pandas' reader."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def tsv_differences(rows: Sequence[ReleaseRow], path: Path) -> list[str]:
    """The questions whose text VLMEvalKit's reader (`pandas.read_csv(sep='\\t')`) reads back
    otherwise than written: an option pandas takes for missing (`None`, `NA`...) or, in a letter
    column of numbers, for a float. A TSV whose rows do not come back one for one is an error."""
    import pandas as pd

    # The whole file at once, as VLMEvalKit reads it (types are inferred per column), but with
    # the image column left out line by line first: the text is what matters, and the images
    # would take memory in proportion to the release.
    text = io.StringIO()
    with path.open(encoding="utf-8", newline="") as handle:
        writer = csv.writer(text, delimiter="\t", lineterminator="\n")
        csv.field_size_limit(2**31 - 1)  # an image's base64 is one field
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader)
        image = header.index("image")
        writer.writerow(header[:image] + header[image + 1 :])
        for fields in reader:
            writer.writerow(fields[:image] + fields[image + 1 :])
    text.seek(0)
    frame = pd.read_csv(text, sep="\t")
    letters = letter_columns(rows)
    if len(frame) != len(rows) or [int(i) for i in frame["index"]] != [r.index for r in rows]:
        raise ValueError(f"{path} does not read back row for row ({len(frame)} of {len(rows)})")
    out = []
    for r, line in zip(rows, frame.to_dict("records"), strict=True):
        wanted = [
            r.question,
            *(r.options[i] if i < len(r.options) else None for i in range(len(letters))),
        ]
        found = [line["question"], *(line[x] for x in letters)]
        for want, got in zip(wanted, found, strict=True):
            if (not want and not pd.isna(got)) or (want and got != _cell(want)):
                out.append(r.question_id)
                break
    return out


def _listed(values: Sequence[str]) -> str:
    """One value as itself, several as the list literal VLMEvalKit's `toliststr` reads."""
    return values[0] if len(values) == 1 else json.dumps(list(values))


def tsv_images(row: ReleaseRow) -> list[str]:
    """The image ids a TSV row shows: a clip question's keyframes sampled from its stretch (an
    image model asked of a clip sees frames of it, as SEED-Bench asks), else its image."""
    return [Path(f).stem for f in row.video_frames] or [row.image_id]


def write_tsv(rows: Sequence[ReleaseRow], images: Path, path: Path) -> None:
    """VLMEvalKit's MCQ layout: integer index, the question id (a twin's row in another
    language's file has its English item's index and id: the files pair by either), base64
    image, question, hint, A.., answer, category, l2-category, split. A clip question's `image` is the list of its stretch's
    keyframes (VLMEvalKit's multi-image form, with `image_path` naming each), in time order. A row
    whose images an earlier row already carries has that row's index in `image` instead
    (VLMEvalKit resolves values of 64 characters or fewer so)."""
    letters = letter_columns(rows)
    videos = any(r.clip_id for r in rows)
    first: dict[tuple[str, ...], int] = {}
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(tsv_columns(letters, videos))
        for r in rows:
            shown = tuple(tsv_images(r))
            if shown in first:
                image = str(first[shown])
            else:
                first[shown] = r.index
                image = _listed(
                    [base64.b64encode(_image_bytes(images, i)).decode("ascii") for i in shown]
                )
            options = [
                _cell(r.options[i]) if i < len(r.options) else "" for i in range(len(letters))
            ]
            ext = EXTENSIONS.get(r.image_format.upper(), r.image_format.lower())
            names = [f"{i}.png" for i in shown] if r.video_frames else [f"{r.image_id}.{ext}"]
            writer.writerow(
                [
                    r.index,
                    r.question_id,
                    image,
                    _cell(r.question),
                    _cell(r.hint or ""),
                    *options,
                    r.answer,
                    r.category,
                    r.l2_category,
                    SPLIT,
                    *(
                        [
                            _listed(names),
                            r.video or "",
                            _seconds(r.video_start),
                            _seconds(r.video_end),
                        ]
                        if videos
                        else []
                    ),
                ]
            )


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:g}"
