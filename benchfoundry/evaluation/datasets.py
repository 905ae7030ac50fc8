"""The datasets an evaluation reads, detected by their layout and named in its output: a release
of ours (`<to>/<name>/<version>/` or `<to>/<name>`, meaning its `latest`), a VLMEvalKit MCQ TSV
(MMBench, SEED-Bench, MMStar TSVs) and an MMStar-layout Parquet file. The TSV and Parquet rows
are read by ingest's own readers, so a row ingest would refuse is refused here too, and counted
by reason. Each question keeps a content id, so a new version of a dataset is asked only the
questions whose content changed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from benchfoundry.answering.engine import MCQItem
from benchfoundry.ids import image_id, question_id

FORMATS = {
    "release": "benchfoundry release",
    "tsv": "VLMEvalKit MCQ TSV",
    "parquet": "MMStar-layout Parquet",
}
EXPECTED = (
    "a release folder (manifest.json and data/*.parquet, or a folder with a `latest` file), a "
    "VLMEvalKit MCQ TSV (index, image, question, A, B.., answer; hint, category, l2-category) or "
    "an MMStar-layout Parquet file (index, question, image, answer, category, l2_category; options "
    "as A.., an options list or in the question)"
)


class EvalDatasetError(ValueError):
    """A dataset an evaluation cannot read: the message says what was expected."""


@dataclass(frozen=True)
class EvalQuestion:
    item: MCQItem  # image as bytes
    image_id: str
    difficulty: str | None = None
    dimension: str | None = None


@dataclass
class EvalDataset:
    path: str
    format: str  # a key of FORMATS
    name: str
    version: str | None
    questions: list[EvalQuestion]
    refused: dict[str, int] = field(default_factory=dict)  # reason -> rows not read

    @property
    def described(self) -> str:
        version = f" {self.version}" if self.version else ""
        return f"{FORMATS[self.format]} {self.name}{version} ({len(self.questions)} questions)"


def load_eval_dataset(path: str | Path, limit: int | None = None) -> EvalDataset:
    """Read a dataset (its first `limit` questions, when given)."""
    path = Path(path)
    if path.is_dir():
        if (path / "mm-vet.json").is_file():
            raise EvalDatasetError(
                f"{path}: an MM-Vet open-ended set; open-ended evaluation (LLM grading) is not "
                "available yet: give a multiple-choice dataset"
            )
        dataset = _release(_release_folder(path))
    elif path.suffix.lower() == ".tsv":
        dataset = _table(path, "tsv")
    elif path.suffix.lower() in (".parquet", ".pq"):
        dataset = _table(path, "parquet")
    elif not path.exists():
        raise EvalDatasetError(f"no dataset at {path}")
    else:
        raise EvalDatasetError(f"{path} is not a dataset this version reads; expected {EXPECTED}")
    if limit is not None:
        dataset.questions = dataset.questions[:limit]
    if not dataset.questions:
        raise EvalDatasetError(f"{path}: no questions to ask")
    return dataset


def _release_folder(path: Path) -> Path:
    from benchfoundry.releases import MANIFEST, read_latest

    if (path / MANIFEST).is_file():
        return path
    latest = read_latest(path)
    if latest and (path / latest / MANIFEST).is_file():
        return path / latest
    raise EvalDatasetError(f"{path} is not a release; expected {EXPECTED}")


def _release(folder: Path) -> EvalDataset:
    from benchfoundry.releases import data_files, read_manifest

    manifest = read_manifest(folder)
    files = data_files(folder)
    if not files:
        raise EvalDatasetError(f"{folder}: the release has no data/test-*.parquet files")
    questions = []
    columns = [
        "question_id", "question", "hint", "options", "answer", "image", "image_id",
        "category", "l2_category", "difficulty", "dimension",
    ]  # fmt: skip
    for file in files:
        for batch in pq.ParquetFile(file).iter_batches(batch_size=256, columns=columns):
            for row in batch.to_pylist():
                questions.append(
                    EvalQuestion(
                        item=MCQItem(
                            question_id=row["question_id"],
                            question=row["question"],
                            options=tuple(row["options"]),
                            answer=row["answer"],
                            hint=row["hint"],
                            image=row["image"]["bytes"],
                            category=row["category"],
                            l2_category=row["l2_category"],
                        ),
                        image_id=row["image_id"],
                        difficulty=row["difficulty"],
                        dimension=row["dimension"],
                    )
                )
    return EvalDataset(
        path=str(folder),
        format="release",
        name=manifest.get("name", folder.parent.name),
        version=manifest.get("version", folder.name),
        questions=questions,
    )


def _table(path: Path, kind: str) -> EvalDataset:
    from benchfoundry.spec import ParquetSource, TsvSource
    from tasks.ingest_items import SourceFormatError
    from tasks.ingest_tables import read_parquet, read_tsv

    try:
        items = (
            read_tsv(TsvSource(path=path))
            if kind == "tsv"
            else read_parquet(ParquetSource(path=path))
        )
    except SourceFormatError as exc:
        raise EvalDatasetError(f"{exc}; expected {EXPECTED}") from None
    refused: Counter[str] = Counter(r.reason for r in items.rejections)
    images: dict[str, bytes] = {}
    for raw in items.images:
        try:
            images[raw.source] = raw.read()
        except Exception as exc:  # noqa: BLE001  an unreadable image file: its rows are refused
            refused[getattr(exc, "reason", "unreadable_file")] += 1
    questions = []
    for seed in items.seeds:
        data = images.get(seed.image_source)
        if data is None:
            refused["missing_image"] += 1
            continue
        image = image_id(data)
        questions.append(
            EvalQuestion(
                item=MCQItem(
                    question_id=question_id(image, seed.question, seed.options),
                    question=seed.question,
                    options=tuple(seed.options),
                    answer=seed.answer,
                    hint=seed.hint,
                    image=data,
                    category=seed.category,
                    l2_category=seed.l2_category,
                ),
                image_id=image,
            )
        )
    return EvalDataset(
        path=str(path),
        format=kind,
        name=path.stem,
        version=None,
        questions=questions,
        refused=dict(sorted(refused.items())),
    )
