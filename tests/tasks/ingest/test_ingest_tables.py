import base64
import csv

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchfoundry.devtools.broken_inputs import write_faulty_tsv
from benchfoundry.devtools.synthetic import TSV_COLUMNS
from benchfoundry.sources.items import SourceFormatError
from benchfoundry.sources.models import ParquetSource, TsvSource
from benchfoundry.sources.tables import read_parquet, read_tsv, split_inline_options


def _write_tsv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


HEADER = [*TSV_COLUMNS, "license"]


def test_tsv_rows_become_images_and_seeds(tmp_path, image_bytes):
    one = base64.b64encode(image_bytes(seed=1)).decode()
    two = base64.b64encode(image_bytes(seed=2)).decode()
    path = _write_tsv(
        tmp_path / "mcq.tsv",
        HEADER,
        [
            [
                "10",
                "30",
                "Which comes later?",
                "",
                "x",
                "y",
                "",
                "",
                "b",
                "cat",
                "l2",
                "dev",
                "CC0",
            ],  # forward reference
            [
                "20",
                one,
                "What is it?",
                "Look closely.",
                "a cat",
                "a dog",
                "a fox",
                "a cow",
                "C",
                "cat",
                "l2",
                "dev",
                "",
            ],
            ["30", two, "Multi\nline question?", "", "yes", "no", "", "", "A", "", "", "", ""],
            ["40", "20", "Same image as 20?", "", "yes", "no", "", "", "A", "cat", "", "", ""],
        ],
    )
    items = read_tsv(TsvSource(path=path, license="L", meta={"origin": "test"}))
    assert items.rejections == []
    assert [i.source.rsplit("=", 1)[1] for i in items.images] == ["20", "30"]
    assert items.images[0].data == base64.b64decode(one) and items.images[0].license == "L"
    seeds = {s.source.rsplit("=", 1)[1]: s for s in items.seeds}
    assert seeds["10"].image_source.endswith("#index=30") and seeds["10"].answer == "B"
    assert seeds["40"].image_source.endswith("#index=20")
    assert (
        seeds["20"].options == ["a cat", "a dog", "a fox", "a cow"]
        and seeds["20"].hint == "Look closely."
    )
    assert (
        seeds["20"].category == "cat"
        and seeds["20"].l2_category == "l2"
        and seeds["20"].split == "dev"
    )
    assert seeds["30"].question == "Multi\nline question?"
    assert seeds["10"].meta["license"] == "CC0"


def test_tsv_image_path_is_read_relative_to_the_file(tmp_path, image_bytes):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "p.png").write_bytes(image_bytes())
    path = _write_tsv(
        tmp_path / "mcq.tsv",
        ["index", "image_path", "question", "A", "B", "answer"],
        [["1", "imgs/p.png", "Q?", "a", "b", "A"]],
    )
    items = read_tsv(TsvSource(path=path))
    assert items.images[0].read() == image_bytes()


def test_faulty_tsv_rows_are_refused_each_with_its_reason(tmp_path):
    path = tmp_path / "faulty.tsv"
    expected = write_faulty_tsv(path)
    items = read_tsv(TsvSource(path=path))
    assert sorted(r.reason for r in items.rejections) == sorted(r for r in expected.values() if r)
    assert len(items.seeds) == sum(1 for r in expected.values() if not r)
    dup = next(r for r in items.rejections if r.reason == "duplicate_index")
    assert "already used on line 2" in dup.detail


def test_malformed_tsv_row(tmp_path):
    path = tmp_path / "m.tsv"
    path.write_text(
        "index\timage_path\tquestion\tA\tB\tanswer\n1\tp.png\tQ?\ta\n", encoding="utf-8"
    )
    items = read_tsv(TsvSource(path=path))
    assert [(r.reason, r.source.endswith("#line=2")) for r in items.rejections] == [
        ("malformed_row", True)
    ]


@pytest.mark.parametrize("missing", ["index", "question", "answer", "A", "B", "image"])
def test_tsv_without_a_required_column_fails_naming_it(tmp_path, missing):
    header = [c for c in ["index", "image", "question", "A", "B", "answer"] if c != missing]
    path = _write_tsv(tmp_path / "x.tsv", header, [["v"] * len(header)])
    with pytest.raises(SourceFormatError, match=f"'{missing}'"):
        read_tsv(TsvSource(path=path))


def test_inline_options_are_split_as_in_mmstar():
    stem, options = split_inline_options(
        "Which option describe the object relationship in the image correctly?\n"
        "Options: A: The suitcase is on the book., B: The suitcase is beneath the cat., "
        "C: The suitcase is beneath the bed., D: The suitcase is beneath the book."
    )
    assert stem == "Which option describe the object relationship in the image correctly?"
    assert options == [
        "The suitcase is on the book.",
        "The suitcase is beneath the cat.",
        "The suitcase is beneath the bed.",
        "The suitcase is beneath the book.",
    ]
    assert split_inline_options("No options here") is None


def test_parquet_in_mmstar_layout(tmp_path, image_bytes):
    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "index": [0, 1, 2, 1],
            "question": [
                "What is shown?\nOptions: A: a cat, B: a dog",
                "Q2?\nOptions: A: x, B: y, C: z",
                "Q3?\nOptions: A: p, B: q",
                "again?\nOptions: A: p, B: q",
            ],
            "image": pa.array(
                [
                    {"bytes": image_bytes(seed=1), "path": None},
                    {"bytes": image_bytes(seed=2), "path": None},
                    {"bytes": None, "path": None},
                    {"bytes": image_bytes(seed=3), "path": None},
                ],
                image_type,
            ),
            "answer": ["B", "D", "A", "A"],
            "category": ["coarse perception"] * 4,
            "l2_category": ["image emotion"] * 4,
            "meta_info": pa.array([{"source": "MMBench", "split": "val"}] * 4),
        }
    )
    path = tmp_path / "mmstar.parquet"
    pq.write_table(table, path)
    items = read_parquet(ParquetSource(path=path))
    assert [r.reason for r in items.rejections] == [
        "answer_not_in_options",
        "missing_image",
        "duplicate_index",
    ]
    (seed,) = items.seeds
    assert (seed.question, seed.options, seed.answer, seed.l2_category) == (
        "What is shown?",
        ["a cat", "a dog"],
        "B",
        "image emotion",
    )
    assert "MMBench" in seed.meta["meta_info"]
    assert len(items.images) == 2


def test_parquet_with_option_columns_and_base64_images(tmp_path, image_bytes):
    path = tmp_path / "p.parquet"
    pq.write_table(
        pa.table(
            {
                "question": ["Q?", "R?"],
                "A": ["a", "c"],
                "B": ["b", "d"],
                "answer": ["B", "A"],
                "image": [base64.b64encode(image_bytes()).decode(), "%%%not-base64%%%" * 10],
            }
        ),
        path,
    )
    items = read_parquet(ParquetSource(path=path))
    assert [s.options for s in items.seeds] == [["a", "b"]]
    assert [r.reason for r in items.rejections] == ["bad_base64"]
    with pytest.raises(SourceFormatError, match="'picture'"):
        read_parquet(ParquetSource(path=path, image_column="picture"))


def test_tsv_with_bom_and_written_answers(tmp_path, image_bytes):
    one = base64.b64encode(image_bytes()).decode()
    path = _write_tsv(
        tmp_path / "bom.tsv",
        ["index", "image", "question", "A", "B", "C", "answer"],
        [
            ["1", one, "Q1?", "a", "b", "c", "(B)"],
            ["2", "1", "Q2?", "a", "b", "c", "c."],
            ["3", "1", "Q3?", "a", "b", "c", "AB"],
            ["4", '["abc", "def"]', "Q4?", "a", "b", "c", "A"],
        ],
    )
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    items = read_tsv(TsvSource(path=path))
    assert [s.answer for s in items.seeds] == ["B", "C"]
    assert sorted(r.reason for r in items.rejections) == [
        "answer_not_in_options",
        "multiple_images",
    ]


def test_an_unbalanced_quote_does_not_swallow_rows_silently(tmp_path):
    path = tmp_path / "quote.tsv"
    path.write_text(
        "index\timage_path\tquestion\tA\tB\tanswer\n"
        '1\tp.png\t"Is it 5\ta\tb\tA\n'
        "2\tp.png\tOrdinary?\ta\tb\tB\n"
        '3\tp.png\tIt is 6" long?\ta\tb\tA\n'
        "4\tp.png\tAfter?\ta\tb\tA\n",
        encoding="utf-8",
    )
    items = read_tsv(TsvSource(path=path))
    assert [r.reason for r in items.rejections] == ["malformed_row"]
    assert "lines 2-4" in items.rejections[0].detail
    assert [s.question for s in items.seeds] == ["After?"]


def test_parquet_option_lists_are_checked_and_null_index_refused(tmp_path, image_bytes):
    path = tmp_path / "o.parquet"
    pq.write_table(
        pa.table(
            {
                "index": [None, 1, 2, 3],
                "question": ["Q0?", "Q1?", "Q2?", "Q3?"],
                "options": pa.array([["a", "b"], ["x", None, "z"], ["x", "y", ""], ["p", "q"]]),
                "answer": ["A", "A", "B", "B"],
                "image": [image_bytes(seed=i) for i in range(4)],
            }
        ),
        path,
    )
    items = read_parquet(ParquetSource(path=path))
    assert sorted(r.reason for r in items.rejections) == ["missing_index", "option_gap"]
    assert [(s.options, s.answer) for s in items.seeds] == [(["x", "y"], "B"), (["p", "q"], "B")]


def test_parquet_options_as_json_text_and_image_paths(tmp_path, image_bytes):
    (tmp_path / "img.png").write_bytes(image_bytes())
    path = tmp_path / "j.parquet"
    pq.write_table(
        pa.table(
            {
                "question": ["Q?"],
                "options": ['["yes", "no"]'],
                "answer": ["B"],
                "image": ["img.png"],
            }
        ),
        path,
    )
    items = read_parquet(ParquetSource(path=path))
    assert items.rejections == [] and items.seeds[0].options == ["yes", "no"]
    assert items.images[0].read() == image_bytes()
