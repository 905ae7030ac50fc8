"""The datasets an evaluation reads, detected by their layout and named in its output: a release
of ours (`<to>/<name>/<version>/` or `<to>/<name>`, meaning its `latest`), a VLMEvalKit MCQ TSV
(MMBench, SEED-Bench, MMStar TSVs) and an MMStar-layout Parquet file; and open-ended sets: MM-Vet's
release layout (`mm-vet.json` beside `images/`) and VLMEvalKit's MMVet TSV (no option columns; a
`category` of comma-separated capabilities). The multiple-choice TSV and Parquet rows are read by
ingest's own readers, so a row ingest would refuse is refused here too, and counted by reason;
an open-ended row without a question, an answer or a readable image is refused the same way.
Each question keeps a content id, so a new version of a dataset is asked only the questions
whose content changed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from benchfoundry.answering.engine import MCQItem
from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import image_id, question_id
from benchfoundry.tasks.evaluate.languages import twin_id

FORMATS = {
    "release": "benchfoundry release",
    "tsv": "VLMEvalKit MCQ TSV",
    "parquet": "MMStar-layout Parquet",
    "mmvet": "MM-Vet open-ended set",
    "mmvet_tsv": "VLMEvalKit MMVet TSV (open-ended)",
}
OPEN_ENDED = ("mmvet", "mmvet_tsv")
EXPECTED = (
    "a release folder (manifest.json and data/*.parquet, or a folder with a `latest` file), a "
    "VLMEvalKit MCQ TSV (index, image, question, A, B.., answer; hint, category, l2-category) or "
    "an MMStar-layout Parquet file (index, question, image, answer, category, l2_category; options "
    "as A.., an options list or in the question)"
)


class EvalDatasetError(UserError, ValueError):
    """A dataset an evaluation cannot read: the message says what was expected."""


@dataclass(frozen=True)
class EvalQuestion:
    item: MCQItem  # image as bytes
    image_id: str
    difficulty: str | None = None
    dimension: str | None = None
    index: str | None = None  # the dataset's own index (a release's row, a TSV's index)
    language: str = "en"  # a bilingual release's twin: asked as `<question_id>@<language>`


@dataclass(frozen=True)
class OpenQuestion:
    """An open-ended question (MM-Vet): answered in free text, graded against `answer`, whose
    `<AND>` and `<OR>` say which parts a right answer must hold."""

    question_id: str
    source_id: str  # the dataset's own id (MM-Vet's `v1_0`, the TSV's index)
    question: str
    answer: str
    image: bytes
    image_id: str
    capabilities: tuple[str, ...]  # the dataset's own names (rec, ocr, know, gen, spat, math)

    @property
    def integration(self) -> str:
        """The exact capability set, as MM-Vet names it (`ocr_spat`)."""
        return "_".join(sorted(self.capabilities)) or "uncategorised"


@dataclass
class EvalDataset:
    path: str
    format: str  # a key of FORMATS
    name: str
    version: str | None
    questions: list[EvalQuestion]
    refused: dict[str, int] = field(default_factory=dict)  # reason -> rows not read
    open_questions: list[OpenQuestion] = field(default_factory=list)  # an open-ended set's

    @property
    def open_ended(self) -> bool:
        return self.format in OPEN_ENDED

    @property
    def size(self) -> int:
        return len(self.open_questions) if self.open_ended else len(self.questions)

    @property
    def described(self) -> str:
        version = f" {self.version}" if self.version else ""
        return f"{FORMATS[self.format]} {self.name}{version} ({self.size} questions)"


def load_eval_dataset(path: str | Path, limit: int | None = None) -> EvalDataset:
    """Read a dataset (its first `limit` questions, when given)."""
    path = Path(path)
    if path.is_dir():
        if (path / "mm-vet.json").is_file():
            dataset = _mmvet(path)
        else:
            dataset = _release(_release_folder(path))
    elif path.suffix.lower() == ".tsv":
        dataset = _mmvet_tsv(path) if _is_open_tsv(path) else _table(path, "tsv")
    elif path.suffix.lower() in (".parquet", ".pq"):
        dataset = _table(path, "parquet")
    elif not path.exists():
        raise EvalDatasetError(f"no dataset at {path}")
    else:
        raise EvalDatasetError(f"{path} is not a dataset this version reads; expected {EXPECTED}")
    if limit is not None:
        dataset.questions = dataset.questions[:limit]
        dataset.open_questions = dataset.open_questions[:limit]
    if not dataset.size:
        raise EvalDatasetError(f"{path}: no questions to ask")
    return dataset


def check_location(path: str | Path) -> None:
    """Refuse, without reading a row (so in a second, before any flow starts), a path that
    `load_eval_dataset` would refuse for where it is or what kind of thing it is."""
    from benchfoundry.storage.releases import data_files

    path = Path(path)
    if not path.exists():
        raise EvalDatasetError(f"no dataset at {path}")
    if path.is_dir():
        if not (path / "mm-vet.json").is_file():
            folder = _release_folder(path)
            if not data_files(folder):
                raise EvalDatasetError(f"{folder}: the release has no data/test-*.parquet files")
    elif path.suffix.lower() not in (".tsv", ".parquet", ".pq"):
        raise EvalDatasetError(f"{path} is not a dataset this version reads; expected {EXPECTED}")


def _run_folder_problem(path: Path) -> str | None:
    """When `path` is a build's run folder, not a release: a sentence that says so and names the
    releases its publish stage wrote (or says it published none)."""
    import json

    from benchfoundry.storage.releases import MANIFEST

    if (path / "data").is_dir() or not (path / MANIFEST).is_file():
        return None
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    stages = {"ingest", "extract", "generate", "filter", "consensus", "select", "review", "publish"}
    if not isinstance(manifest, dict) or not stages & set(manifest):
        return None
    published = ((manifest.get("publish") or {}).get("summary") or {}).get("release")
    where = (
        f"its release is {published} (or the benchmark's folder {Path(published).parent}, "
        "whose `latest` it reads)"
        if published
        else "it has published no release yet (run its publish stage)"
    )
    return f"{path} is a build's run folder, not a release: {where}"


def _release_folder(path: Path) -> Path:
    from benchfoundry.storage.releases import MANIFEST, read_latest

    if problem := _run_folder_problem(path):
        raise EvalDatasetError(problem)
    if (path / MANIFEST).is_file():
        return path
    latest = read_latest(path)
    if latest and (path / latest / MANIFEST).is_file():
        return path / latest
    raise EvalDatasetError(f"{path} is not a release; expected {EXPECTED}")


def release_item_id(row: dict, language: str) -> str:
    """The id a release row (question_id, question, hint, options) is asked under: its question
    id, or in another language its twin's (`twin_id`, which hashes the twin's text)."""
    text = "\n".join([row["question"], row["hint"] or "", *row["options"]])
    return twin_id(row["question_id"], language, text)


def _release(folder: Path) -> EvalDataset:
    from benchfoundry.storage.releases import data_files, language_files, read_manifest

    manifest = read_manifest(folder)
    files = data_files(folder)
    if not files:
        raise EvalDatasetError(f"{folder}: the release has no data/test-*.parquet files")
    questions = []
    columns = [
        "question_id", "question", "hint", "options", "answer", "image", "image_id",
        "category", "l2_category", "difficulty", "dimension", "index",
    ]  # fmt: skip
    twins = [(f, lang) for lang, fs in language_files(folder).items() for f in fs]
    for file, language in [(f, "en") for f in files] + twins:
        present = set(pq.ParquetFile(file).schema_arrow.names)
        clip_columns = [c for c in ("video", "video_start", "video_end") if c in present]
        for batch in pq.ParquetFile(file).iter_batches(
            batch_size=256, columns=columns + clip_columns
        ):
            for row in batch.to_pylist():
                questions.append(
                    EvalQuestion(
                        item=MCQItem(
                            question_id=release_item_id(row, language),
                            question=row["question"],
                            options=tuple(row["options"]),
                            answer=row["answer"],
                            hint=row["hint"],
                            image=row["image"]["bytes"],
                            category=row["category"],
                            l2_category=row["l2_category"],
                            video=_clip(folder, row),
                            language=language,
                        ),
                        image_id=row["image_id"],
                        difficulty=row["difficulty"],
                        dimension=row["dimension"],
                        index=str(row["index"]),
                        language=language,
                    )
                )
    return EvalDataset(
        path=str(folder),
        format="release",
        name=manifest.get("name", folder.parent.name),
        version=manifest.get("version", folder.name),
        questions=questions,
    )


def _clip(folder: Path, row: dict) -> tuple[str, float, float] | None:
    """A release row's clip (its file beside the data) and stretch, or None for an image's."""
    if not row.get("video"):
        return None
    path = (folder / row["video"]).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.is_file():
        raise EvalDatasetError(
            f"{folder}: question {row['question_id']} names clip {row['video']}, which is not "
            "in the release"
        )
    return str(path), float(row["video_start"]), float(row["video_end"])


def _table(path: Path, kind: str) -> EvalDataset:
    from benchfoundry.sources.items import SourceFormatError
    from benchfoundry.sources.models import ParquetSource, TsvSource
    from benchfoundry.sources.tables import read_parquet, read_tsv

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
                index=seed.meta.get("index"),
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


# --- open-ended sets ----------------------------------------------------------------------------


def _checked_image(data: bytes) -> str | None:
    """Why the bytes are not an image we can show a model, or None."""
    from benchfoundry.core.imaging import ImageRejected, decode

    try:
        decode(data)
    except ImageRejected as exc:
        return exc.reason
    return None


def _capabilities(value: object) -> tuple[str, ...]:
    parts = value if isinstance(value, list) else str(value or "").split(",")
    return tuple(sorted({str(p).strip() for p in parts if str(p).strip()}))


def _open_question(
    source_id: str, question: object, answer: object, data: bytes, capabilities: object
) -> OpenQuestion:
    image = image_id(data)
    question, answer = str(question), str(answer)
    return OpenQuestion(
        # the reference answer is part of the content: a corrected answer is graded again
        question_id=question_id(image, question, ["open-ended", answer]),
        source_id=source_id,
        question=question,
        answer=answer,
        image=data,
        image_id=image,
        capabilities=_capabilities(capabilities),
    )


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value) or not str(value).strip()


def _mmvet(folder: Path) -> EvalDataset:
    """MM-Vet's release: `mm-vet.json` maps ids to imagename, capability, question, answer;
    the images are in `images/`."""
    import json

    try:
        entries = json.loads((folder / "mm-vet.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalDatasetError(f"{folder / 'mm-vet.json'}: not readable JSON ({exc})") from None
    if not isinstance(entries, dict):
        raise EvalDatasetError(
            f"{folder / 'mm-vet.json'}: expected an object mapping ids to questions"
        )
    refused: Counter[str] = Counter()
    questions = []
    images: dict[str, bytes | str] = {}  # imagename -> bytes, or why not
    for source_id, entry in entries.items():
        if not isinstance(entry, dict) or any(
            _blank(entry.get(k)) for k in ("imagename", "question", "answer")
        ):
            refused["missing_field"] += 1
            continue
        name = str(entry["imagename"])
        if name not in images:
            path = folder / "images" / name
            if "/" in name or "\\" in name or not path.is_file():
                images[name] = "missing_image"
            else:
                data = path.read_bytes()
                images[name] = _checked_image(data) or data
        data = images[name]
        if isinstance(data, str):
            refused[data] += 1
            continue
        questions.append(
            _open_question(
                str(source_id), entry["question"], entry["answer"], data, entry.get("capability")
            )
        )
    return EvalDataset(
        path=str(folder),
        format="mmvet",
        name=folder.name,
        version=None,
        questions=[],
        open_questions=questions,
        refused=dict(sorted(refused.items())),
    )


def _is_open_tsv(path: Path) -> bool:
    """A TSV with a question and an answer but no option columns: VLMEvalKit's MMVet layout."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            header = handle.readline().rstrip("\r\n").split("\t")
    except OSError:
        return False
    return {"question", "answer"} <= set(header) and not {"A", "B"} & set(header)


def _mmvet_tsv(path: Path) -> EvalDataset:
    """VLMEvalKit's MMVet TSV: index, image (base64, or the index of an earlier row with the
    same image), question, answer, category (comma-separated capabilities)."""
    import base64
    import binascii

    import pandas as pd

    try:
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise EvalDatasetError(f"{path}: not a readable TSV ({exc}); expected {EXPECTED}") from None
    missing = [c for c in ("index", "image", "question", "answer") if c not in frame.columns]
    if missing:
        raise EvalDatasetError(f"{path}: no column(s) {', '.join(missing)}; expected {EXPECTED}")
    refused: Counter[str] = Counter()
    by_index: dict[str, bytes | str] = {}
    questions = []
    for row in frame.to_dict("records"):
        index, value = str(row["index"]), str(row["image"])
        if len(value) <= 64 and value in by_index:
            data = by_index[value]
        else:
            try:
                raw = base64.b64decode(value, validate=True) if value else b""
                data = _checked_image(raw) or raw
            except (binascii.Error, ValueError):
                data = "not_base64"
        by_index[index] = data
        if any(_blank(row.get(k)) for k in ("question", "answer")):
            refused["missing_field"] += 1
            continue
        if isinstance(data, str):
            refused[data] += 1
            continue
        questions.append(
            _open_question(index, row["question"], row["answer"], data, row.get("category"))
        )
    return EvalDataset(
        path=str(path),
        format="mmvet_tsv",
        name=path.stem,
        version=None,
        questions=[],
        open_questions=questions,
        refused=dict(sorted(refused.items())),
    )
