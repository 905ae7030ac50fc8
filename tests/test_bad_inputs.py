"""The bad-input corpus: kinds of broken input across images, TSV and Parquet sources, build
specs, review imports, Label Studio exports, prediction files, evaluation datasets and releases.
Each gets a clear error naming what is wrong, or a refusal with its reason code; nothing else
is lost (the good rows beside a bad one are kept). docs/reliability.md lists the kinds."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image


def png(seed: int = 0, size: tuple[int, int] = (64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (seed * 40 % 255, 90, 160)).save(buffer, format="PNG")
    return buffer.getvalue()


def _raised(fn: Callable[[], object]) -> str:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  the outcome is the error's type and message
        return f"{type(exc).__name__}: {exc}"
    return "no error"


# --- images -------------------------------------------------------------------------------------


def _image(data: bytes) -> str:
    from benchfoundry.core.imaging import decode

    return _raised(lambda: decode(data))


def image_empty(tmp: Path) -> str:
    return _image(b"")


def image_not_an_image(tmp: Path) -> str:
    return _image(b"%PDF-1.4 not a picture at all")


def image_truncated(tmp: Path) -> str:
    buffer = io.BytesIO()
    Image.effect_noise((128, 96), 64).convert("RGB").save(buffer, format="PNG")
    data = buffer.getvalue()
    return _image(data[: len(data) // 2])


def image_too_small(tmp: Path) -> str:
    from benchfoundry.sources.files import read_folder
    from benchfoundry.sources.models import FolderSource

    (tmp / "f").mkdir()
    (tmp / "f" / "tiny.png").write_bytes(png(size=(4, 4)))
    (tmp / "f" / "ok.png").write_bytes(png(1))
    from benchfoundry.core.imaging import ImageLimits
    from benchfoundry.tasks.ingest.images import decode_one

    items = read_folder(FolderSource(path=tmp / "f"))
    found = [decode_one(raw, ImageLimits(min_side=32)) for raw in sorted(items.images, key=str)]
    return " ".join(getattr(r, "reason", "decoded") for r in found)


def image_text_file_named_png(tmp: Path) -> str:
    return _image(b"hello, I am text\n" * 10)


# --- TSV sources ----------------------------------------------------------------------------------


def _tsv(tmp: Path, rows: list[dict], name: str = "q.tsv") -> str:
    from benchfoundry.sources.models import TsvSource
    from benchfoundry.sources.tables import read_tsv

    path = tmp / name
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    try:
        items = read_tsv(TsvSource(path=path))
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return f"kept {len(items.seeds)}; refused " + ",".join(
        sorted(r.reason for r in items.rejections)
    )


def _row(i: int, **over) -> dict:
    row = {
        "index": i, "image": base64.b64encode(png(i)).decode(), "question": f"Q{i}?",
        "A": "red", "B": "blue", "C": "green", "answer": "A", "category": "colour",
    }  # fmt: skip
    return {**row, **over}


def tsv_answer_not_an_option(tmp: Path) -> str:
    return _tsv(tmp, [_row(0), _row(1, answer="E")])


def tsv_bad_base64(tmp: Path) -> str:
    return _tsv(
        tmp, [_row(0), _row(1, image="!!!not base64, and too long to be a row index!!!" * 2)]
    )


def tsv_empty_question(tmp: Path) -> str:
    return _tsv(tmp, [_row(0), _row(1, question="")])


def tsv_duplicate_options(tmp: Path) -> str:
    return _tsv(tmp, [_row(0), _row(1, B="red")])


def tsv_missing_columns(tmp: Path) -> str:
    return _tsv(tmp, [{"index": 0, "question": "Q?"}])


def tsv_reference_to_unknown_row(tmp: Path) -> str:
    return _tsv(tmp, [_row(0), _row(1, image="77")])


def tsv_not_utf8(tmp: Path) -> str:
    from benchfoundry.sources.models import TsvSource
    from benchfoundry.sources.tables import read_tsv

    path = tmp / "latin.tsv"
    image = base64.b64encode(png()).decode()
    text = f"index\timage\tquestion\tA\tB\tanswer\n0\t{image}\tWhich caf\xe9?\tx\ty\tA\n"
    path.write_bytes(text.encode("latin-1"))
    items = read_tsv(TsvSource(path=path))
    return f"kept {len(items.seeds)}; refused " + ",".join(r.reason for r in items.rejections)


# --- Parquet sources -------------------------------------------------------------------------------


def _parquet(tmp: Path, table: pa.Table) -> str:
    from benchfoundry.sources.models import ParquetSource
    from benchfoundry.sources.tables import read_parquet

    path = tmp / "d.parquet"
    pq.write_table(table, path)
    try:
        items = read_parquet(ParquetSource(path=path))
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return f"kept {len(items.seeds)}; refused " + ",".join(
        sorted(r.reason for r in items.rejections)
    )


def parquet_not_parquet(tmp: Path) -> str:
    from benchfoundry.sources.models import ParquetSource
    from benchfoundry.sources.tables import read_parquet

    path = tmp / "fake.parquet"
    path.write_bytes(b"PAR1 but not really")
    return _raised(lambda: read_parquet(ParquetSource(path=path)))


def parquet_no_image_column(tmp: Path) -> str:
    return _parquet(tmp, pa.table({"index": [0], "question": ["Q?"], "answer": ["A"]}))


def parquet_broken_image_bytes(tmp: Path) -> str:
    """The rows are read; the broken image is refused when ingest decodes it."""
    from benchfoundry.core.imaging import ImageLimits
    from benchfoundry.sources.models import ParquetSource
    from benchfoundry.sources.tables import read_parquet
    from benchfoundry.tasks.ingest.images import decode_one

    read = _parquet(
        tmp,
        pa.table({
            "index": [0, 1], "question": ["Q?\nOptions: A: x, B: y"] * 2,
            "image": [{"bytes": png(), "path": "a.png"}, {"bytes": b"garbage", "path": "b.png"}],
            "answer": ["A", "B"], "category": ["c", "c"],
        }),
    )  # fmt: skip
    items = read_parquet(ParquetSource(path=tmp / "d.parquet"))
    decoded = [getattr(decode_one(raw, ImageLimits()), "reason", "decoded") for raw in items.images]
    return f"{read}; images: {' '.join(sorted(decoded))}"


def parquet_answer_not_an_option(tmp: Path) -> str:
    return _parquet(
        tmp,
        pa.table({
            "index": [0, 1], "question": ["Q?\nOptions: A: x, B: y"] * 2,
            "image": [{"bytes": png(), "path": "a.png"}, {"bytes": png(2), "path": "b.png"}],
            "answer": ["A", "D"], "category": ["c", "c"],
        }),
    )  # fmt: skip


# --- build specs ---------------------------------------------------------------------------------


def _spec(tmp: Path, text: str) -> str:
    from benchfoundry.pipeline.spec import load_spec

    path = tmp / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return _raised(lambda: load_spec(path))


def spec_not_yaml(tmp: Path) -> str:
    return _spec(tmp, "name: [unclosed\n")


def spec_unknown_stage(tmp: Path) -> str:
    return _spec(
        tmp,
        "name: x\nsources: [{kind: packaged, packages: [scikit-image]}]\nstages: [ingest, polish]\n",
    )


def spec_unknown_option(tmp: Path) -> str:
    return _spec(
        tmp,
        "name: x\nsources: [{kind: packaged, packages: [scikit-image]}]\noptions: {select: {taget: 5}}\n",
    )


def source_folder_missing(tmp: Path) -> str:
    from benchfoundry.sources.models import FolderSource
    from benchfoundry.tasks.ingest.reading import read_source

    return _raised(lambda: read_source(FolderSource(path=tmp / "nowhere")))


def spec_bad_model(tmp: Path) -> str:
    return _spec(
        tmp,
        "name: x\nsources: [{kind: packaged, packages: [scikit-image]}]\nmodels: {vlm: ['not a model spec']}\n",
    )


def spec_unknown_role(tmp: Path) -> str:
    return _spec(
        tmp,
        "name: x\nsources: [{kind: packaged, packages: [scikit-image]}]\nmodels: {painter: [blind/random]}\n",
    )


# --- review imports and Label Studio exports --------------------------------------------------------


def _import(tmp: Path, text: str) -> str:
    """What `benchfoundry review import FILE` reads the file as (before any decision is
    checked against the run's candidates)."""
    from benchfoundry.cli.review import _read_decisions

    path = tmp / "decisions.json"
    path.write_text(text, encoding="utf-8")
    return _raised(lambda: _read_decisions(path))


def review_not_json(tmp: Path) -> str:
    return _import(tmp, "{this is not json")


def review_unknown_field(tmp: Path) -> str:
    return _import(tmp, json.dumps([{"question_id": "q", "reviewer": "a", "decision": "accept",
                                     "colour": "blue"}]))  # fmt: skip


def labelstudio_export_without_question_id(tmp: Path) -> str:
    """Read as Label Studio's export, then checked against the run: refused with its reason."""
    from benchfoundry.cli.review import _read_decisions
    from benchfoundry.decisions.reviews import record
    from benchfoundry.storage.tables import RunFolder

    path = tmp / "export.json"
    path.write_text(json.dumps([{"id": 1, "data": {}, "annotations": [{"result": []}]}]))
    decisions, tool = _read_decisions(path)
    added, _, refused = record(RunFolder(tmp / "run"), decisions, tool)
    return f"{tool}: {len(decisions)} read, {added} stored, refused: {'; '.join(refused)}"


def labelstudio_two_annotators_by_id_only(tmp: Path) -> str:
    """Label Studio's plain export names annotators by id: two on one reviewer's tasks."""
    accept = [{"from_name": "decision", "value": {"choices": ["accept"]}}]
    task = {"data": {"question_id": "q", "reviewer": "ann"},
            "annotations": [{"completed_by": 7, "result": accept}, {"completed_by": 9, "result": accept}]}  # fmt: skip
    return _import(tmp, json.dumps([task]))


def labelstudio_reviewers_map_not_an_object(tmp: Path) -> str:
    from benchfoundry.cli.review import _read_decisions

    export, names = tmp / "export.json", tmp / "reviewers.json"
    export.write_text(json.dumps([{"data": {"question_id": "q"}, "annotations": []}]))
    names.write_text(json.dumps(["ann", "bo"]))
    return _raised(lambda: _read_decisions(export, names))


# --- prediction files and evaluation datasets ------------------------------------------------------


def predictions_missing_prediction_column(tmp: Path) -> str:
    from benchfoundry.answering.predictions import read_predictions

    path = tmp / "p.tsv"
    pd.DataFrame([{"index": 0, "question": "Q?", "A": "x", "B": "y", "answer": "A"}]).to_csv(
        path, sep="\t", index=False
    )
    return _raised(lambda: read_predictions(path))


def predictions_unknown_extension(tmp: Path) -> str:
    from benchfoundry.answering.predictions import read_predictions

    path = tmp / "p.docx"
    path.write_bytes(b"x")
    return _raised(lambda: read_predictions(path))


def dataset_unknown_file(tmp: Path) -> str:
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset

    (tmp / "notes.txt").write_text("x", encoding="utf-8")
    return _raised(lambda: load_eval_dataset(tmp / "notes.txt"))


def mmvet_json_broken(tmp: Path) -> str:
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset

    (tmp / "mmvet").mkdir()
    (tmp / "mmvet" / "mm-vet.json").write_text("{", encoding="utf-8")
    return _raised(lambda: load_eval_dataset(tmp / "mmvet"))


# --- releases -------------------------------------------------------------------------------------


def release_folder_that_is_not_one(tmp: Path) -> str:
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset

    (tmp / "empty").mkdir()
    return _raised(lambda: load_eval_dataset(tmp / "empty"))


def release_with_a_tampered_file(tmp: Path) -> str:
    from benchfoundry.storage.releases import verify

    version = tmp / "rel" / "v1"
    (version / "data").mkdir(parents=True)
    data = version / "data" / "test-00000-of-00001.parquet"
    pq.write_table(pa.table({"x": [1]}), data)
    from benchfoundry.storage.releases import file_sha256

    manifest = {"files": {"data/test-00000-of-00001.parquet": {"sha256": file_sha256(data)}}}
    (version / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    pq.write_table(pa.table({"x": [2]}), data)  # changed after release
    return "problems: " + "; ".join(verify(version))


CASES: list[tuple[Callable[[Path], str], str]] = [
    (image_empty, "empty_file"),
    (image_not_an_image, "not_an_image"),
    (image_truncated, "truncated"),
    (image_too_small, "too_small"),
    (image_text_file_named_png, "not_an_image"),
    (tsv_answer_not_an_option, "kept 1; refused answer_not_in_options"),
    (tsv_bad_base64, "kept 1; refused bad_base64"),
    (tsv_empty_question, "kept 1; refused empty_question"),
    (tsv_duplicate_options, "kept 1; refused duplicate_options"),
    (tsv_missing_columns, "SourceFormatError"),
    (tsv_reference_to_unknown_row, "kept 1; refused"),
    (tsv_not_utf8, "kept 0; refused non_utf8"),
    (parquet_not_parquet, "SourceFormatError"),
    (parquet_no_image_column, "SourceFormatError"),
    (parquet_broken_image_bytes, "images: decoded not_an_image"),
    (parquet_answer_not_an_option, "kept 1; refused answer_not_in_options"),
    (spec_not_yaml, "SpecError"),
    (spec_unknown_stage, "polish"),
    (spec_unknown_option, "taget"),
    (source_folder_missing, "nowhere"),
    (spec_bad_model, "not a model spec"),
    (spec_unknown_role, "painter"),
    (review_not_json, "neither JSON nor JSON lines"),
    (review_unknown_field, "unknown fields ['colour']"),
    (labelstudio_export_without_question_id, "no candidate with question id"),
    (labelstudio_two_annotators_by_id_only, "name each user with --reviewers-map"),
    (labelstudio_reviewers_map_not_an_object, "give a JSON object of Label Studio e-mail"),
    (predictions_missing_prediction_column, "prediction"),
    (predictions_unknown_extension, ".docx"),
    (dataset_unknown_file, "expected a release folder"),
    (mmvet_json_broken, "not readable JSON"),
    (release_folder_that_is_not_one, "is not a release"),
    (release_with_a_tampered_file, "test-00000-of-00001.parquet"),
]


@pytest.mark.parametrize(("case", "expected"), CASES, ids=[c.__name__ for c, _ in CASES])
def test_each_bad_input_gets_a_clear_error_or_a_reason(tmp_path, case, expected):
    outcome = case(tmp_path)
    assert expected in outcome, outcome
    assert "Traceback" not in outcome


def test_the_corpus_is_at_least_thirty_kinds_and_documented():
    assert len(CASES) >= 30
    text = (Path(__file__).parent.parent / "docs" / "reliability.md").read_text(encoding="utf-8")
    for case, _ in CASES:
        assert f"`{case.__name__}`" in text, case.__name__
