"""Item analysis (`benchfoundry report`): a two-parameter IRT model (`irt.py`) fitted per dataset
version to the items × respondents matrix of first-pass answers, where a respondent is one
model in one setting (with or without the image) of one evaluation run, or one model of the
build's own consensus ensemble (its `judgements`, when the run folder holds them). Per item: its
difficulty and discrimination with standard errors, how many respondents it rests on, and
whether it is `suspect`: a discrimination below 0.2 means able respondents do no better on it
than weak ones (negative: they do worse, the mark of a wrong key), so it goes back to people
(`benchfoundry review export --suspects`). Written as `items.parquet` beside the leaderboard.

Each language is its own analysis: a bilingual release's twins (`<question_id>@<language>`)
are fitted apart from the English items, a respondent's ability being its own in each language,
so that a model's loss in Chinese is not read as items that fail to discriminate. A twin found
suspect is then told apart by its English item (`twin_suspects.py`): a translation suspect when
the English item is fine, else a key suspect of the English item.

The first pass is the unit (MMStar's hit), not CircularEval's all-rotations score: it asks
whether a respondent picked the key, which is what a wrong key or an ambiguous question
disturbs. Chance baselines that answer at random are respondents too: they are what the weakest
models look like. Fewer than five respondents: no fit, the counts only, and a note saying so."""

from __future__ import annotations

import html
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel

from benchfoundry.core.errors import UserError
from benchfoundry.core.records import JudgementRecord, ResultRecord
from benchfoundry.decisions.reviews import now
from benchfoundry.decisions.suspects import FILE  # noqa: F401  (re-exported for the report)
from benchfoundry.storage.atomic import atomic_write_table
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.irt import fit_2pl
from benchfoundry.tasks.evaluate.languages import language_of
from benchfoundry.tasks.evaluate.summary import EvaluateSummary
from benchfoundry.tasks.evaluate.twin_suspects import KEY, TRANSLATION, judge_twins

log = logging.getLogger(__name__)

MIN_RESPONDENTS = 5
SUSPECT_BELOW = 0.2  # discrimination: near zero or negative

SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("version", pa.string()),
        ("question_id", pa.string()),
        ("index", pa.string()),  # the dataset's own index (a release's row, a TSV's index)
        ("language", pa.string()),  # en, or a twin's: each language is analysed on its own
        ("respondents", pa.int64()),  # how many respondents answered it: what it rests on
        ("right", pa.int64()),
        ("difficulty", pa.float64()),
        ("difficulty_se", pa.float64()),
        ("discrimination", pa.float64()),
        ("discrimination_se", pa.float64()),
        ("suspect", pa.bool_()),
        ("suspect_kind", pa.string()),  # key, or translation (a twin whose English item is fine)
        # what goes back to people (`review export --suspects`): the English item's question id
        # for a key suspect, the twin's `<question_id>@<language>` for a translation suspect
        ("review_item", pa.string()),
        ("why", pa.string()),
        ("analysed_at", pa.string()),  # when: decisions after it are what became of a suspect
    ]
)


class Respondent(BaseModel):
    name: str  # as shown
    model: str
    with_image: bool
    source: str  # evaluation, or build (the consensus ensemble's judgements)
    run: str
    answered: int
    ability: float | None = None
    ability_se: float | None = None


class SuspectItem(BaseModel):
    question_id: str
    index: str | None
    kind: str = KEY  # key, or translation
    review_item: str  # what goes back to people: the English item, or the twin
    difficulty: float
    discrimination: float
    discrimination_se: float
    respondents: int
    right: int
    why: str


class ItemAnalysis(BaseModel):
    """One language of one dataset version."""

    dataset: str
    version: str | None
    language: str = "en"
    languages: list[str] = ["en"]  # the dataset's, each analysed on its own
    items: int
    fitted: bool
    respondents: list[Respondent]
    suspects: list[SuspectItem] = []
    note: str | None = None

    @property
    def label(self) -> str:
        label = f"{self.dataset} {self.version or ''}".strip()
        return f"{label} ({self.language})" if len(self.languages) > 1 else label

    def _kinds(self) -> str:
        """How a twin language's suspects divide (nothing for English's)."""
        if self.language == "en" or not self.suspects:
            return ""
        translation = sum(s.kind == TRANSLATION for s in self.suspects)
        key = len(self.suspects) - translation
        return (
            f": {translation} translation suspect{'s' if translation != 1 else ''} (the English "
            f"item is fine), {key} key suspect{'s' if key != 1 else ''} (sent back as the "
            "English item)"
        )

    def lines(self) -> list[str]:
        """A short account in words (the report's Markdown and text)."""
        head = f"{self.label}: {self.items} items, {len(self.respondents)} respondents"
        if not self.fitted:
            return [f"{head}; {self.note}"]
        out = [
            f"{head}; {len(self.suspects)} suspect (discrimination below {SUSPECT_BELOW})"
            + self._kinds()
        ]
        out += [self.note] if self.note else []
        out += [
            f"suspect {s.index or s.question_id}: {s.why}"
            for s in sorted(self.suspects, key=lambda s: s.discrimination)
        ]
        return out


def _dataset_ids(s: EvaluateSummary) -> dict[str, str | None]:
    """question id -> the dataset's own index, in the dataset's order; from the release's data
    files, or the dataset read again (a TSV's question id hashes its image)."""
    from benchfoundry.storage.releases import data_files, language_files
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset, release_item_id

    path = Path(s.dataset.path)
    if s.dataset.format == "release":
        out: dict[str, str | None] = {}
        for file in data_files(path):
            table = pq.read_table(file, columns=["question_id", "index"])
            out.update(
                zip(
                    table["question_id"].to_pylist(),
                    map(str, table["index"].to_pylist()),
                    strict=True,
                )
            )
        columns = ["question_id", "question", "hint", "options", "index"]
        for language, files in language_files(path).items():
            for file in files:
                for row in pq.read_table(file, columns=columns).to_pylist():
                    out[release_item_id(row, language)] = str(row["index"])
        return out
    dataset = load_eval_dataset(path)
    return {q.item.question_id: q.index for q in dataset.questions}


def _answered_ids(group: Sequence[EvaluateSummary]) -> dict[str, str | None]:
    """The question ids the runs answered, where the dataset itself cannot be read again."""
    ids: set[str] = set()
    for s in group:
        table = RunFolder(s.run).table(ResultRecord)
        if table.exists():
            rows = table.read(columns=["run_id", "question_id"])
            runs = pa.array(sorted({score.run_id for score in s.scores}))
            rows = rows.filter(pc.is_in(rows["run_id"], value_set=runs))
            ids.update(rows["question_id"].to_pylist())
    return dict.fromkeys(sorted(ids))


def _first_passes(table: pa.Table, ids: dict[str, str | None]) -> pa.Table:
    rows = table.filter(pc.equal(table["pass_index"], 0))
    return rows.filter(pc.is_in(rows["question_id"], value_set=pa.array(list(ids))))


def _evaluation_answers(
    group: Sequence[EvaluateSummary], ids: dict[str, str | None]
) -> list[tuple[Respondent, dict[str, bool]]]:
    several = len({s.run for s in group}) > 1
    out = []
    for s in group:
        table = RunFolder(s.run).table(ResultRecord)
        if not table.exists():
            continue
        rows = _first_passes(
            table.read(columns=["run_id", "model", "question_id", "pass_index", "correct"]), ids
        )
        for score in s.scores:
            mine = rows.filter(
                pc.and_(
                    pc.equal(rows["run_id"], score.run_id), pc.equal(rows["model"], score.model)
                )
            )
            answers = dict(
                zip(mine["question_id"].to_pylist(), mine["correct"].to_pylist(), strict=True)
            )
            name = score.model + ("" if score.with_image else " (no image)")
            name += f" [{Path(s.run).name}]" if several else ""
            out.append(
                (
                    Respondent(
                        name=name,
                        model=score.model,
                        with_image=score.with_image,
                        source="evaluation",
                        run=s.run,
                        answered=len(answers),
                    ),
                    answers,
                )
            )
    return out


def _build_answers(
    group: Sequence[EvaluateSummary], ids: dict[str, str | None]
) -> list[tuple[Respondent, dict[str, bool]]]:
    """The consensus ensemble's first passes on these items, from run folders that hold them."""
    out = []
    for run in dict.fromkeys(s.run for s in group):
        table = RunFolder(run).table(JudgementRecord)
        if not table.exists():
            continue
        columns = ["question_id", "model", "mode", "with_image", "pass_index", "correct", "error"]
        rows = _first_passes(table.read(columns=columns), ids)
        rows = rows.filter(pc.and_(pc.equal(rows["mode"], "consensus"), rows["with_image"]))
        rows = rows.filter(pc.is_null(rows["error"]))
        for model in sorted(set(rows["model"].to_pylist())):
            mine = rows.filter(pc.equal(rows["model"], model))
            answers = dict(
                zip(mine["question_id"].to_pylist(), mine["correct"].to_pylist(), strict=True)
            )
            respondent = Respondent(
                name=f"{model} (build: consensus)",
                model=model,
                with_image=True,
                source="build",
                run=run,
                answered=len(answers),
            )
            out.append((respondent, answers))
    return out


def _why(a: float, se: float) -> str:
    if a < 0:
        return (
            f"discrimination {a:+.2f} ± {se:.2f}: able respondents fail it more often than weak "
            "ones (a wrong key, an ambiguous question or a broken image?)"
        )
    return (
        f"discrimination {a:+.2f} ± {se:.2f}: near zero, it does not separate able respondents "
        "from weak ones"
    )


def analyse(group: Sequence[EvaluateSummary]) -> tuple[list[ItemAnalysis], list[dict]]:
    """The item analysis of one dataset version's runs, one per language, and its items' rows."""
    first = group[0]
    unread = None
    try:
        ids = _dataset_ids(first)
    except (UserError, OSError) as exc:
        ids, unread = _answered_ids(group), f"the dataset could not be read again ({exc})"
    answered = [
        (r, a) for r, a in [*_evaluation_answers(group, ids), *_build_answers(group, ids)] if a
    ]
    by_language: dict[str, list[str]] = {"en": []}
    for q in ids:
        by_language.setdefault(language_of(q)[1], []).append(q)
    if not by_language["en"] and len(by_language) > 1:
        del by_language["en"]
    languages = sorted(by_language, key=lambda language: (language != "en", language))
    analyses, rows = [], []
    for language in languages:
        analysis = ItemAnalysis(
            dataset=first.dataset.name,
            version=first.dataset.version,
            language=language,
            languages=languages,
            items=len(by_language[language]),
            fitted=False,
            respondents=[],
            note=unread and f"{unread}: items as answered, without their index",
        )
        rows += _fit_language(analysis, by_language[language], ids, answered)
        analyses.append(analysis)
    judge_twins(rows)
    for analysis in analyses:
        analysis.suspects = [
            SuspectItem(
                question_id=row["question_id"],
                index=row["index"],
                kind=row["suspect_kind"],
                review_item=row["review_item"],
                difficulty=row["difficulty"],
                discrimination=row["discrimination"],
                discrimination_se=row["discrimination_se"],
                respondents=row["respondents"],
                right=row["right"],
                why=row["why"],
            )
            for row in rows
            if row["suspect"] and row["language"] == analysis.language
        ]
    return analyses, rows


def _fit_language(
    analysis: ItemAnalysis,
    order: list[str],
    ids: dict[str, str | None],
    answered: Sequence[tuple[Respondent, dict[str, bool]]],
) -> list[dict]:
    """Fit one language's items (`order`) to the answers given to them; fill `analysis` (its
    respondents with their ability in this language) and return the items' rows."""
    column = {q: j for j, q in enumerate(order)}
    mine = []
    for respondent, answers in answered:
        here = {q: right for q, right in answers.items() if q in column}
        if here:
            mine.append((respondent.model_copy(update={"answered": len(here)}), here))
    matrix = np.full((len(mine), len(order)), np.nan)
    for i, (_, answers) in enumerate(mine):
        for q, right in answers.items():
            matrix[i, column[q]] = float(right)
    seen = ~np.isnan(matrix)
    counts, rights = seen.sum(0), np.nansum(matrix, 0)
    analysis.respondents = [r for r, _ in mine]
    rows = [
        {
            "dataset": analysis.dataset,
            "version": analysis.version,
            "question_id": q,
            "index": ids[q],
            "language": analysis.language,
            "respondents": int(counts[j]),
            "right": int(rights[j]),
            "suspect": False,
        }
        for j, q in enumerate(order)
    ]
    if len(mine) < MIN_RESPONDENTS or len(order) < 2:
        analysis.note = (f"{analysis.note}; " if analysis.note else "") + _too_few(
            len(mine), len(order)
        )
        return rows
    fit = fit_2pl(matrix)
    if not fit.converged:
        log.warning("%s: the IRT fit stopped before converging", analysis.label)
    for i, respondent in enumerate(analysis.respondents):
        respondent.ability = float(fit.ability[i])
        respondent.ability_se = float(fit.ability_se[i])
    for j, row in enumerate(rows):
        a, se = float(fit.discrimination[j]), float(fit.discrimination_se[j])
        # An item everyone got right (or wrong) carries no sign of either kind.
        informative = (
            row["respondents"] >= MIN_RESPONDENTS and 0 < row["right"] < row["respondents"]
        )
        suspect = informative and a < SUSPECT_BELOW
        row.update(
            difficulty=float(fit.difficulty[j]),
            difficulty_se=float(fit.difficulty_se[j]),
            discrimination=a,
            discrimination_se=se,
            suspect=suspect,
            suspect_kind=KEY if suspect else None,
            review_item=row["question_id"] if suspect else None,
            why=_why(a, se) if suspect else None,
        )
    analysis.fitted = True
    return rows


def write_items(summaries: Sequence[EvaluateSummary], path: Path) -> list[ItemAnalysis]:
    """Analyse the items of every multiple-choice dataset version in `summaries`; write their
    rows to `path`."""
    groups: dict[tuple[str, str | None], list[EvaluateSummary]] = {}
    for s in summaries:
        if s.mode != "open" and s.scores:
            groups.setdefault((s.dataset.name, s.dataset.version), []).append(s)
    analyses, rows = [], []
    when = now()
    for group in groups.values():
        found_analyses, found = analyse(group)
        analyses += found_analyses
        rows += [{**row, "analysed_at": when} for row in found]
    atomic_write_table(path, pa.Table.from_pylist(rows, schema=SCHEMA))
    return analyses


def markdown_lines(analyses: Sequence[ItemAnalysis]) -> list[str]:
    """The item section of the leaderboard's Markdown."""
    if not analyses:
        return []
    out = ["## Items (two-parameter IRT on first answers)", ""]
    for a in analyses:
        out += [f"- {line}" for line in a.lines()]
    return out


def html_section(analyses: Sequence[ItemAnalysis]) -> str:
    """The item section of the HTML report: respondents' abilities, then the suspect items."""
    e = html.escape
    parts = []
    for a in analyses:
        parts.append(f"<h2>Items of {e(a.label)}</h2><p>{e(a.lines()[0])}</p>")
        if a.note and a.fitted:
            parts.append(f"<p>{e(a.note)}</p>")
        if not a.fitted:
            continue
        people = "".join(
            f"<tr><td>{e(r.name)}</td><td>{e(r.source)}</td><td>{r.answered}</td>"
            f"<td>{r.ability:+.2f} ± {r.ability_se:.2f}</td></tr>"
            for r in sorted(a.respondents, key=lambda r: -(r.ability or 0))
        )
        parts.append(
            "<table><thead><tr><th>respondent</th><th>from</th><th>answered</th>"
            f"<th>ability ± se</th></tr></thead><tbody>{people}</tbody></table>"
        )
        if a.suspects:
            rows = "".join(
                f"<tr><td>{e(s.index or '-')}</td><td><code>{e(s.question_id)}</code></td>"
                f"<td>{s.right}/{s.respondents}</td><td>{s.difficulty:+.2f}</td>"
                f"<td>{e(s.kind)}: <code>{e(s.review_item)}</code></td><td>{e(s.why)}</td></tr>"
                for s in sorted(a.suspects, key=lambda s: s.discrimination)
            )
            parts.append(
                "<h3>Suspect items</h3><table><thead><tr><th>index</th><th>question</th>"
                "<th>right</th><th>difficulty</th><th>to review</th><th>why</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>"
            )
    return "".join(parts)


def _too_few(respondents: int, items: int) -> str:
    """Why no item analysis was made, in words: what it needs and what it has."""
    short = []
    if respondents < MIN_RESPONDENTS:
        short.append(
            f"{respondents} respondent{'s' if respondents != 1 else ''} (models, or a model with "
            f"and without the image) answered the same items, and it needs {MIN_RESPONDENTS}"
        )
    if items < 2:
        short.append(
            f"{items} item{'s' if items != 1 else ''} were answered by all, and it needs 2"
        )
    return "no item analysis (difficulty, discrimination, suspect items): " + "; ".join(short)
