"""An evaluation's explorer: the release it evaluated (read from the release's own explorer when
it has one, so the key's evidence and the review history come along; else from its Parquet),
each evaluated model's passes from the report's `responses.parquet`, the calls that failed from
the runs' `call_failures`, and the item analysis from `items.parquet`. What it takes of the
evaluation is typed by what it reads (`Summary` below), so no stage is imported here."""

from __future__ import annotations

import logging
import math
import shutil
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import pyarrow.parquet as pq

from benchfoundry.core.records import CallFailureRecord
from benchfoundry.explorer.release_data import release_items, split_id
from benchfoundry.explorer.site import (
    FOLDER,
    Item,
    Media,
    Model,
    Pass,
    Site,
    Text,
    read_chunk,
    write_site,
)
from benchfoundry.storage.releases import release_at
from benchfoundry.storage.tables import RunFolder

log = logging.getLogger(__name__)

SEES = {"pixels": "sees the image", "facts": "reads extracted facts", "nothing": "blind"}
ANALYSIS = (
    "respondents",
    "right",
    "difficulty",
    "discrimination",
    "suspect",
    "suspect_kind",
    "why",
)


class Score(Protocol):
    model: str
    sees: str
    with_image: bool
    run_id: str
    in_build: Sequence[Any]


class Dataset(Protocol):
    path: str
    name: str
    version: str | None


class Summary(Protocol):
    run: str
    dataset: Dataset
    scores: Sequence[Score]


def served(model: str) -> tuple[str, str | None]:
    """(the model's name, where it is served: scheme, host and port only) of `name@URL`; a URL's
    user, password, path and query never reach the explorer's files."""
    name, at, url = model.partition("@")
    if not at or "://" not in url:
        return model, None
    parts = urlsplit(url)
    return name, f"{parts.scheme}://{parts.hostname or ''}" + (
        f":{parts.port}" if parts.port else ""
    )


def label(score: Score) -> str:
    """A model as the report's boards name it, with what it sees (without its server's URL)."""
    shown = SEES.get(score.sees, score.sees) if score.with_image else "no image"
    return f"{served(score.model)[0]} ({shown})"


def _item(value: dict[str, Any]) -> Item:
    """An item read back from a release explorer's data, without the build's answers."""
    known = {f.name for f in fields(Item)}
    item = Item(**{k: v for k, v in value.items() if k in known})
    item.texts = {lang: Text(**t) for lang, t in value["texts"].items()}
    item.answers, item.failures, item.analysis = {}, {}, {}
    return item


def _copy_new(source: str, target: str) -> None:
    if not Path(target).exists():
        shutil.copy2(source, target)


def _release_items(release: Path, out: Path) -> list[Item]:
    """The release's items: from its own explorer when it has one (media copied), else read."""
    built = release / FOLDER
    chunks = sorted((built / "data").glob("items-*.js"))
    if chunks:
        if (built / "media").is_dir():  # a file already there is the same (named by content)
            shutil.copytree(
                built / "media", out / "media", dirs_exist_ok=True, copy_function=_copy_new
            )
        return [_item(v) for chunk in chunks for v in read_chunk(chunk)]
    return release_items(release, Media(out))


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _add_answers(
    items: dict[str, Item], folder: Path, summaries: Sequence[Summary], settings: dict
) -> None:
    """Each setting's passes from responses.parquet and its failed calls from its run."""
    responses = folder / "responses.parquet"
    if responses.is_file():
        columns = ["run", "run_id", "model", "question_id", "pass_index", "option_order",
                   "response", "extracted", "correct"]  # fmt: skip
        for row in pq.read_table(responses, columns=columns).to_pylist():
            m = settings.get((row["run"], row["run_id"], row["model"]))
            base, language = split_id(row["question_id"])
            if m is None or base not in items:
                continue
            items[base].answers.setdefault(language, {}).setdefault(m, []).append(
                Pass(
                    index=row["pass_index"],
                    order=list(row["option_order"]),
                    response=row["response"],
                    extracted=row["extracted"],
                    correct=bool(row["correct"]),
                )
            )
    for run in {s.run for s in summaries}:
        table = RunFolder(run).table(CallFailureRecord)
        if not table.exists():
            continue
        failed = table.read(columns=["run_id", "model", "question_id", "at", "reason"])
        for row in sorted(failed.to_pylist(), key=lambda r: r["at"]):  # the newest counts
            m = settings.get((run, row["run_id"], row["model"]))
            base, language = split_id(row["question_id"])
            if m is not None and base in items:
                items[base].failures.setdefault(language, {})[m] = row["reason"]


def _add_analysis(items: dict[str, Item], path: Path) -> None:
    if not path.is_file():
        return
    for row in pq.read_table(path).to_pylist():
        base, language = split_id(row["question_id"])
        if base in items:
            language = row.get("language") or language
            items[base].analysis[language] = {
                k: _number(row.get(k)) for k in ANALYSIS if row.get(k) is not None
            }


def evaluation_site(
    folder: Path, summaries: Sequence[Summary], out: Path | None = None
) -> Site | None:
    """The explorer data of the evaluations reported in `folder` (their media written under
    `out`, by default `folder/explore`); None when no dataset of theirs is a release."""
    out = out or folder / FOLDER
    releases = list(
        dict.fromkeys(
            found for s in summaries if (found := release_at(Path(s.dataset.path))) is not None
        )
    )
    if not releases:
        return None
    items: dict[str, Item] = {}
    for release in releases:
        for item in _release_items(release, out):
            items.setdefault(item.qid, item)
    models: list[Model] = []
    settings: dict[tuple[str, str, str], int] = {}
    for s in summaries:
        for score in s.scores:
            key = (s.run, score.run_id, score.model)
            if key not in settings:
                settings[key] = len(models)
                roles = [x.label() if hasattr(x, "label") else str(x) for x in score.in_build]
                name, at = served(score.model)
                models.append(Model(label(score), name, "evaluation", roles, at))
    _add_answers(items, folder, summaries, settings)
    _add_analysis(items, folder / "items.parquet")
    first = summaries[0].dataset
    return Site(
        title=f"evaluation of {first.name} {first.version or ''}".strip(),
        kind="evaluation",
        name=first.name,
        version=first.version,
        models=models,
        items=list(items.values()),
        links={"the report": "../report.html"},
    )


def write_evaluation_explorer(
    folder: Path, summaries: Sequence[Summary], out: Path | None = None
) -> Path | None:
    """The evaluation's explorer beside its report (`folder/explore/index.html`, or `out`), or
    None when none of its datasets is a release (a TSV has no pages to show)."""
    out = Path(out or Path(folder) / FOLDER)
    site = evaluation_site(Path(folder), summaries, out)
    if site is None:
        log.info("no explorer: the evaluated datasets are not releases")
        return None
    if out != Path(folder) / FOLDER:
        site.links = {}  # the report is not beside it
    return write_site(site, out)
