"""A release's items as the explorer shows them, read from the release's own files (its Parquet
shards, every language, the clips beside them) and, when the run that built it is at hand, the
run's tables: the evidence each key rests on (with the OCR lines it quotes found again in the
image's facts), every review decision on the item and its twins, and the build's judgements
(the text-only filter's and consensus's models, each pass)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchfoundry.core.records import (
    CandidateRecord,
    JudgementRecord,
    ReviewRecord,
    VisualFactsRecord,
)
from benchfoundry.explorer.site import FOLDER, Item, Media, Model, Pass, Site, Text, write_site
from benchfoundry.storage.releases import data_files, language_files, read_manifest
from benchfoundry.storage.tables import RunFolder

SEPARATOR = "@"  # a twin's id: `<question_id>@<language>` (review), `...@zh:<hash>` (evaluate)
BOX = re.compile(r"\[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]")
OCR_LINE = re.compile(r'OCR line "(.*)"')
ENGLISH = [
    "question_id", "index", "question", "hint", "options", "answer", "dimension", "difficulty",
    "image", "image_id", "source", "hits_text", "hits_vlm", "reviewers", "review_decision",
    "review_state", "human_reviewed", "review_changes",
]  # fmt: skip
SHOWN = ["source", "hits_text", "hits_vlm", "reviewers", "review_decision", "review_state",
         "human_reviewed", "review_changes"]  # fmt: skip
CLIP = ["video", "video_start", "video_end", "clip_start", "clip_end"]
BUILD_MODES = {"text_only": "text only", "consensus": "consensus"}


def split_id(item_id: str) -> tuple[str, str]:
    """(English question id, language) of an item id in any of its forms."""
    base, _, rest = item_id.partition(SEPARATOR)
    return base, (rest.split(":", 1)[0] or "en") if rest else "en"


def _rows(files: list[Path], wanted: list[str]) -> Iterator[dict[str, Any]]:
    """The rows, a row group at a time (`iter_batches` reads ahead: 540 MiB against 160 MiB
    of peak memory on a release of 20,000 questions whose rows carry their images)."""
    for file in files:
        parquet = pq.ParquetFile(file)
        columns = [c for c in wanted if c in parquet.schema_arrow.names]
        for group in range(parquet.num_row_groups):
            yield from parquet.read_row_group(group, columns=columns).to_pylist()


def release_items(release: Path, media: Media) -> list[Item]:
    """Every item of the release with its twins' text, its image (and clip) written to `media`."""
    items: dict[str, Item] = {}
    for row in _rows(data_files(release), ENGLISH + CLIP):
        image = row.get("image") or {}
        full = thumb = None
        width = height = None
        if image.get("bytes"):
            full, thumb, width, height = media.image(
                row["image_id"], image["bytes"], image.get("path")
            )
        clip = None
        if row.get("video") and (release / row["video"]).is_file():
            clip = {
                "src": media.clip(release / row["video"]),
                "start": row.get("video_start") or 0.0,
                "end": row.get("video_end"),
                "source_start": row.get("clip_start"),
                "source_end": row.get("clip_end"),
            }
        items[row["question_id"]] = Item(
            qid=row["question_id"],
            index=row.get("index"),
            dimension=row["dimension"],
            bin=row.get("difficulty"),
            key=row["answer"],
            texts={"en": Text(row["question"], row.get("hint"), list(row["options"]))},
            image_id=row.get("image_id"),
            image=full,
            thumb=thumb,
            width=width,
            height=height,
            clip=clip,
            release={k: row.get(k) for k in SHOWN if row.get(k) is not None},
        )
    for language, files in language_files(release).items():
        for row in _rows(files, ["question_id", "question", "hint", "options"]):
            if (item := items.get(row["question_id"])) is not None:
                item.texts[language] = Text(row["question"], row.get("hint"), list(row["options"]))
    return list(items.values())


def _cited(evidence: list[str], facts: list[VisualFactsRecord]) -> list[dict[str, Any]]:
    """The boxes the evidence names (instances as `[x0, y0, x1, y1]`) and the OCR lines it
    quotes, found in the image's facts: what the key rests on, in image pixels."""
    shapes: list[dict[str, Any]] = []
    for number, line in enumerate(evidence, start=1):  # labelled by the line they come from
        for match in BOX.finditer(line):
            box = [float(v) for v in match.groups()]
            shapes.append({"box": box, "label": str(number)})
        if quoted := OCR_LINE.search(line):
            for facts_record in facts:
                for ocr in facts_record.ocr_lines:
                    if ocr.text == quoted.group(1):
                        box = [float(v) for v in ocr.box]
                        shapes.append({"box": box, "label": f"{number}: {ocr.text}"})
                        break
                else:
                    continue
                break
    return shapes


def _history(records: list[ReviewRecord]) -> list[dict[str, Any]]:
    changed = ("new_answer", "new_question", "new_options", "new_dimension")
    return [
        {
            "at": r.decided_at,
            "who": r.reviewer,
            "role": r.role,
            "tool": r.tool,
            "language": r.language or "en",
            "decision": r.decision,
            "adjudication": r.adjudication,
            "changes": {k[4:]: getattr(r, k) for k in changed if getattr(r, k) is not None},
            "why": " — ".join(x for x in (r.reason, r.note) if x),
        }
        for r in sorted(records, key=lambda r: r.decided_at)
    ]


def add_run(items: list[Item], run: RunFolder) -> list[Model]:
    """The run's evidence, review history and build judgements onto `items`; returns the build's
    models (each judgement mode its own respondent)."""
    by_id = {i.qid: i for i in items}
    if run.table(ReviewRecord).exists():
        reviews: dict[str, list[ReviewRecord]] = defaultdict(list)
        for r in run.table(ReviewRecord).records():
            base, _ = split_id(r.question_id)
            if base in by_id:
                reviews[base].append(r)
        for qid, found in reviews.items():
            by_id[qid].reviews = _history(found)
    if run.table(CandidateRecord).exists():
        evidence = {
            row["question_id"]: row["evidence"]
            for row in run.table(CandidateRecord)
            .read(columns=["question_id", "evidence"])
            .to_pylist()
            if row["question_id"] in by_id
        }
        facts: dict[str, list[VisualFactsRecord]] = defaultdict(list)
        quoting = {i.qid for i in items if any("OCR line" in e for e in evidence.get(i.qid, []))}
        if quoting and run.table(VisualFactsRecord).exists():
            wanted = {by_id[q].image_id for q in quoting}
            for f in run.table(VisualFactsRecord).records():
                if f.image_id in wanted:
                    facts[f.image_id].append(f)
        for qid, lines in evidence.items():
            item = by_id[qid]
            item.evidence = list(lines)
            item.shapes = _cited(item.evidence, facts.get(item.image_id or "", []))
    return _build_answers(items, run)


def _build_answers(items: list[Item], run: RunFolder) -> list[Model]:
    if not run.table(JudgementRecord).exists():
        return []
    by_id = {i.qid: i for i in items}
    columns = ["question_id", "model", "mode", "with_image", "pass_index", "option_order",
               "raw_response", "extracted", "correct", "error_kind"]  # fmt: skip
    models: dict[tuple[str, str], int] = {}
    found: list[Model] = []
    for row in run.table(JudgementRecord).read(columns=columns).to_pylist():
        base, language = split_id(row["question_id"])
        if base not in by_id or row["mode"] not in BUILD_MODES:
            continue
        key = (row["model"], row["mode"])
        if key not in models:
            models[key] = len(found)
            found.append(
                Model(
                    label=f"{row['model']} (build: {BUILD_MODES[row['mode']]})",
                    model=row["model"],
                    source="build",
                )
            )
        m, item = models[key], by_id[base]
        if row["error_kind"]:
            item.failures.setdefault(language, {})[m] = row["error_kind"]
            continue
        item.answers.setdefault(language, {}).setdefault(m, []).append(
            Pass(
                index=row["pass_index"],
                order=list(row["option_order"]),
                response=row["raw_response"],
                extracted=row["extracted"],
                correct=row["correct"],
            )
        )
    return found


def release_site(
    release: Path,
    out: Path,
    run: RunFolder | None = None,
    name: str | None = None,
    version: str | None = None,
) -> Site:
    """The release's explorer data, its media written under `out`. `name` and `version`: of a
    release being written (its manifest comes last), else read from its manifest."""
    if name is None or version is None:
        manifest = read_manifest(release)
        name = name or manifest.get("name", release.parent.name)
        version = version or manifest.get("version", release.name)
    items = release_items(release, Media(out))
    notes = []
    models: list[Model] = []
    if run is not None:
        models = add_run(items, run)
    else:
        notes.append(
            "written from the release alone: the key's evidence, the review history and the "
            "build's judgements are in the run that built it (benchfoundry explore --run RUN)"
        )
    if models:
        notes.append(
            "the models are the build's (quality control's judgements); an evaluation's "
            "explorer, beside its report, shows the evaluated models"
        )
    return Site(
        title=f"{name} {version}",
        kind="release",
        name=name,
        version=version,
        models=models,
        items=items,
        notes=notes,
    )


def write_release_explorer(
    release: Path,
    run: RunFolder | None = None,
    out: Path | None = None,
    name: str | None = None,
    version: str | None = None,
) -> Path:
    """The release's explorer, by default inside it (`<release>/explore/index.html`)."""
    out = out or release / FOLDER
    return write_site(release_site(release, out, run, name, version), out)
