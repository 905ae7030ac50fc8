"""Bad sources ingestion must not accept quietly: names that are not UTF-8, paths that lead out of a
source's folder, ambiguous headers, options beyond J, control characters, empty tables, and image
values of the wrong type. Each gets a clear error or a quarantine row with its own reason."""

import base64
import csv
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchfoundry.core.records import ImageRecord, ImageSourceRecord, QuarantineRecord
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.items import SourceFormatError
from benchfoundry.sources.models import FolderSource, ParquetSource, TsvSource
from benchfoundry.sources.tables import read_parquet, read_tsv
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.stage import NothingIngested
from benchfoundry.tasks.ingest.stage import run as ingest_stage


def _tsv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _reasons(items):
    return sorted((r.reason, r.detail) for r in items.rejections)


def test_a_file_name_that_is_not_utf8_is_stored_losslessly_beside_the_others(tmp_path, image_bytes):
    folder = tmp_path / "photos"
    folder.mkdir()
    raw_name = b"caf\xe9-" + b"\xff.png"  # Latin-1 and a stray byte: not UTF-8
    with open(os.path.join(os.fsencode(folder), raw_name), "wb") as handle:
        handle.write(image_bytes(seed=1))
    (folder / "plain.png").write_bytes(image_bytes(seed=2))
    (folder / os.fsdecode(b"notes-\xe9.txt")).write_text("not an image")
    run = RunFolder(tmp_path / "run")
    summary = ingest_stage(
        StageRun.make(run, sources=[FolderSource(path=folder)], ingest=IngestOptions())
    )
    assert summary.images_added == 2
    sources = {r.source: r for r in run.table(ImageSourceRecord).records()}
    odd = next(s for s in sources if "caf" in s)
    assert odd.endswith("caf\\xe9-\\xff.png")
    meta = sources[odd].meta
    assert meta["file"] == "caf\\xe9-\\xff.png"
    assert base64.b64decode(meta["file_bytes_base64"]) == raw_name
    assert any(s.endswith("plain.png") for s in sources)
    assert "file_bytes_base64" not in next(
        r.meta for s, r in sources.items() if s.endswith("plain.png")
    )
    refused = run.table(QuarantineRecord).records()
    assert [(q.reason, q.source.rsplit("/", 1)[1]) for q in refused] == [
        ("unsupported_extension", "notes-\\xe9.txt")
    ]


def test_parquet_image_paths_may_not_leave_the_sources_folder(tmp_path, image_bytes):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.png").write_bytes(image_bytes(seed=1))
    data = tmp_path / "data"
    data.mkdir()
    (data / "inside.png").write_bytes(image_bytes(seed=2))
    (data / "sneaky.png").symlink_to(tmp_path / "outside" / "x.png")
    path = data / "bench.parquet"
    images = [
        {"bytes": None, "path": "../outside/x.png"},
        {"bytes": None, "path": str(tmp_path / "outside" / "x.png")},
        {"bytes": None, "path": "inside.png"},
        {"bytes": None, "path": "sneaky.png"},
    ]
    pq.write_table(
        pa.table(
            {
                "index": ["1", "2", "3", "4"],
                "question": ["Q?"] * 4,
                "A": ["a"] * 4,
                "B": ["b"] * 4,
                "answer": ["A"] * 4,
                "image": images,
            }
        ),
        path,
    )
    items = read_parquet(ParquetSource(path=path))
    outside = [r for r in items.rejections if r.reason == "path_outside_root"]
    assert sorted(r.source.rsplit("=", 1)[1] for r in outside) == ["1", "2", "4"]
    assert "../outside/x.png" in outside[0].detail and "image_root" in outside[0].detail
    assert [i.read() for i in items.images] == [image_bytes(seed=2)]
    # A bare path string is held to the same rule, and image_root widens what may be read.
    bare = tmp_path / "data" / "bare.parquet"
    pq.write_table(
        pa.table(
            {
                "question": ["Q?"],
                "A": ["a"],
                "B": ["b"],
                "answer": ["A"],
                "image": ["../outside/x.png"],
            }
        ),
        bare,
    )
    assert [r.reason for r in read_parquet(ParquetSource(path=bare)).rejections] == [
        "path_outside_root"
    ]
    allowed = read_parquet(ParquetSource(path=bare, image_root=tmp_path / "outside"))
    assert allowed.rejections == [] and allowed.images[0].read() == image_bytes(seed=1)


def test_tsv_image_paths_may_not_leave_the_sources_folder(tmp_path, image_bytes):
    (tmp_path / "secret.png").write_bytes(image_bytes(seed=1))
    (tmp_path / "tsv").mkdir()
    (tmp_path / "tsv" / "ok.png").write_bytes(image_bytes(seed=2))
    path = _tsv(
        tmp_path / "tsv" / "q.tsv",
        ["index", "image_path", "question", "A", "B", "answer"],
        [
            ["1", "../secret.png", "Q?", "a", "b", "A"],
            ["2", str(tmp_path / "secret.png"), "Q?", "a", "b", "A"],
            ["3", "ok.png", "Q?", "a", "b", "A"],
        ],
    )
    items = read_tsv(TsvSource(path=path))
    assert [r.reason for r in items.rejections] == ["path_outside_root"] * 2
    assert len(items.images) == 1 and items.images[0].read() == image_bytes(seed=2)
    # image_root is where relative paths start and what they may not leave.
    widened = read_tsv(TsvSource(path=path, image_root=tmp_path))
    assert [r.source.rsplit("=", 1)[1] for r in widened.rejections] == ["1"]
    assert widened.images[0].read() == image_bytes(seed=1)


def test_a_tsv_with_a_duplicated_column_is_refused_naming_it(tmp_path):
    path = _tsv(
        tmp_path / "dup.tsv",
        ["index", "image", "question", "A", "B", "A", "answer", "answer"],
        [["1", "x", "Q?", "a", "b", "c", "A", "B"]],
    )
    with pytest.raises(SourceFormatError, match=r"column\(s\) A, answer appear more than once"):
        read_tsv(TsvSource(path=path))


def test_a_parquet_file_with_a_duplicated_column_is_refused(tmp_path):
    path = tmp_path / "dup.parquet"
    table = pa.Table.from_arrays(
        [pa.array(["Q?"]), pa.array(["A"]), pa.array(["B"]), pa.array([b"x"])],
        names=["question", "answer", "answer", "image"],
    )
    pq.write_table(table, path)
    with pytest.raises(SourceFormatError, match="answer appear more than once"):
        read_parquet(ParquetSource(path=path))


def test_options_beyond_j_are_quarantined_at_ingest(tmp_path, image_bytes):
    letters = [chr(65 + i) for i in range(26)]
    image = base64.b64encode(image_bytes()).decode()
    path = _tsv(
        tmp_path / "az.tsv",
        ["index", "image", "question", *letters, "answer"],
        [
            ["1", image, "Q?", *[f"o{i}" for i in range(26)], "A"],
            ["2", "1", "Q two?", "x", "y", *[""] * 24, "B"],
        ],
    )
    items = read_tsv(TsvSource(path=path))
    assert [(r.reason, r.source.rsplit("=", 1)[1]) for r in items.rejections] == [
        ("too_many_options", "1")
    ]
    assert "K, L, M" in items.rejections[0].detail
    assert [s.options for s in items.seeds] == [["x", "y"]]
    assert not any(k in items.seeds[0].meta for k in "KLZ")


def test_parquet_codes_say_what_is_wrong(tmp_path, image_bytes):
    path = tmp_path / "p.parquet"
    pq.write_table(
        pa.table(
            {
                "index": ["1", "2"],
                "question": ["Q?", "Q?"],
                "options": [[f"o{i}" for i in range(12)], ["x", "y"]],
                "answer": ["A", "A"],
                "image": [image_bytes(seed=1), image_bytes(seed=2)],
            }
        ),
        path,
    )
    assert [r.reason for r in read_parquet(ParquetSource(path=path)).rejections] == [
        "too_many_options"
    ]
    ints = tmp_path / "ints.parquet"
    pq.write_table(
        pa.table({"question": ["Q?"], "A": ["a"], "B": ["b"], "answer": ["A"], "image": [7]}), ints
    )
    ((reason, detail),) = _reasons(read_parquet(ParquetSource(path=ints)))
    assert reason == "bad_image_value" and "int" in detail


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("question", "What\x00 is it?", "question holds U+0000"),
        ("hint", "look\x1b[31m here", "hint holds U+001B"),
        ("B", "b\x07", "option B holds U+0007"),
    ],
)
def test_control_characters_are_quarantined_with_the_field_named(
    tmp_path, image_bytes, column, value, named
):
    image = base64.b64encode(image_bytes()).decode()
    row = {"index": "1", "image": image, "question": "Q?", "hint": "", "A": "a", "B": "b"}
    row["answer"] = "A"
    row[column] = value
    path = _tsv(tmp_path / "c.tsv", list(row), [list(row.values())])
    items = read_tsv(TsvSource(path=path))
    assert [r.reason for r in items.rejections] == ["control_characters"]
    assert named in items.rejections[0].detail and items.seeds == []


def test_tabs_and_newlines_in_a_question_are_fine(tmp_path, image_bytes):
    image = base64.b64encode(image_bytes()).decode()
    path = _tsv(
        tmp_path / "ok.tsv",
        ["index", "image", "question", "A", "B", "answer"],
        [
            ["1", image, "Line one\r\nline two?", "a", "b", "A"],
            ["2", "1", "A\ttab?", "a", "b", "A"],
        ],
    )
    items = read_tsv(TsvSource(path=path))
    assert items.rejections == [] and len(items.seeds) == 2


def test_a_table_with_a_header_and_no_rows_is_said_out_loud(tmp_path):
    tsv = _tsv(tmp_path / "empty.tsv", ["index", "image", "question", "A", "B", "answer"], [])
    parquet = tmp_path / "empty.parquet"
    schema = pa.schema([("question", pa.string()), ("answer", pa.string()), ("image", pa.binary())])
    pq.write_table(schema.empty_table(), parquet)
    run = RunFolder(tmp_path / "run")
    stage = StageRun.make(
        run, sources=[TsvSource(path=tsv), ParquetSource(path=parquet)], ingest=IngestOptions()
    )
    with pytest.raises(NothingIngested) as stopped:  # nothing to build from: the build stops
        ingest_stage(stage)
    assert "ingest kept no image" in str(stopped.value)
    assert f"refused: no_rows 2 (e.g. {tsv}, {parquet})" in str(stopped.value)
    assert {q.source for q in run.table(QuarantineRecord).records()} == {str(tsv), str(parquet)}
    assert run.table(ImageRecord).records() == []


def test_odd_image_paths_are_refused_one_row_at_a_time(tmp_path, image_bytes):
    (tmp_path / "img.png").write_bytes(image_bytes())
    path = _tsv(
        tmp_path / "nul.tsv",
        ["index", "image_path", "question", "A", "B", "answer"],
        [["1", "a\x00b.png", "Q?", "a", "b", "A"], ["2", "img.png", "Q?", "a", "b", "A"]],
    )
    items = read_tsv(TsvSource(path=path))
    assert [(r.reason, r.source[-1]) for r in items.rejections] == [("control_characters", "1")]
    assert len(items.images) == 1
    parquet = tmp_path / "structs.parquet"
    pq.write_table(
        pa.table(
            {
                "question": ["Q?", "Q?"],
                "A": ["a", "a"],
                "B": ["b", "b"],
                "answer": ["A", "A"],
                "image": [{"bytes": b"", "path": "img.png"}, {"bytes": None, "path": "a\x00b"}],
            }
        ),
        parquet,
    )
    items = read_parquet(ParquetSource(path=parquet))
    assert [r.reason for r in items.rejections] == ["control_characters"]
    assert items.images[0].read() == image_bytes()  # empty bytes beside a path: the path is read
