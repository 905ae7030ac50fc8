"""The quality-control steps: `filter` asks text-only models every candidate without its image,
`consensus` asks vision-language models with it, and `select` turns the stored answers into hits,
verdicts, difficulty and a balanced selection (`scored`). Each step's entry point (`run_filter`,
`run_consensus`, `run_select`) is what its registry entry and flow call."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
from pydantic import BaseModel

from benchfoundry.answering.engine import AnsweringEngine
from benchfoundry.core import progress
from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.records import CandidateRecord, JudgementRecord, ScoredRecord
from benchfoundry.gateway import Gateway, GenerateParams
from benchfoundry.gateway.models import ModelSpec, protect_models
from benchfoundry.storage.atomic import atomic_write_bytes
from benchfoundry.storage.refusals import refused_candidates
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.assess import (
    TEXT_MODE,
    VLM_MODE,
    Hits,
    StoredPass,
    Verdict,
    count_hits,
    judge,
    judge_text,
    outcomes,
    stored_passes,
)
from benchfoundry.tasks.qc.ensemble import ensemble_warnings
from benchfoundry.tasks.qc.evidence import evidence_for
from benchfoundry.tasks.qc.items import clips_of, mcq_item
from benchfoundry.tasks.qc.members import QCConfigError, counted, text_members, vlm_members
from benchfoundry.tasks.qc.options import STEPS as QC_STEPS
from benchfoundry.tasks.qc.options import (
    ConsensusOptions,
    FilterOptions,
    SelectOptions,
)
from benchfoundry.tasks.qc.select import Assessed, select
from benchfoundry.tasks.qc.summary import AskSummary, ModelHits, SelectSummary, summarise
from benchfoundry.tasks.qc.votes import evidence_counts, text_warning, vote_counts

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


def qc_candidates(run: RunFolder) -> tuple[list[CandidateRecord], set[str]]:
    """Candidates to check (in id order) and the ids the generate stage refused."""
    refused = set(refused_candidates(run))
    records = sorted(run.table(CandidateRecord).records(), key=lambda c: c.question_id)
    return [c for c in records if c.question_id not in refused], refused


def ask(
    run: RunFolder,
    gateway: Gateway,
    members: Sequence[tuple[str, str]],
    mode: str,
    circular: bool,
    max_tokens: int,
    judge_model: str | None = None,
    skip: Collection[str] = (),
) -> AskSummary:
    """Ask every model every candidate but those in `skip` (without the image in the text-only
    mode) and store the passes in `judgements`, replacing earlier answers of these models in
    this mode."""
    started = time.monotonic()
    with_image = mode == VLM_MODE
    candidates, refused = qc_candidates(run)
    skipped = {c.question_id for c in candidates} & set(skip)
    candidates = [c for c in candidates if c.question_id not in skipped]
    clips = clips_of(run, candidates) if with_image else {}
    items = [mcq_item(c, clips) for c in candidates]
    answers = [c.answer for c in candidates]
    asked = {c.question_id for c in candidates}
    del candidates  # the items hold what is asked; the full records would stay to the end
    engine = AnsweringEngine(
        gateway,
        judge=judge_model,
        params=GenerateParams(max_tokens=max_tokens),
        with_image=with_image,
    )
    cached_before = gateway.ledger.totals().cached
    judgements = run.table(JudgementRecord)
    answered: list[pa.Table] = []  # each model's passes, as rows (a fraction of their objects)
    hits: list[ModelHits] = []
    sees = {model: gateway.sees(model) for model, _ in members}  # resolves every model first
    blind = [m for m, what in sees.items() if what == "nothing"]
    if with_image and blind:
        raise QCConfigError(
            f"model(s) {', '.join(blind)} see no image: the consensus step needs vision-language "
            "models (or facts/MODEL, which reads the extracted visual facts)"
        )
    step = "filter" if mode == TEXT_MODE else "consensus"
    for model, role in members:
        if not items:
            continue
        gateway.prepare(model, answers)
        results, report = engine.run(
            items,
            model,
            circular=circular,
            on_done=lambda n, m=model: progress.report(f"{step} {m}", n, len(items)),
        )
        answered.append(
            judgements.to_arrow(p.to_record(mode, with_image) for r in results for p in r.passes)
        )
        del results
        hits.append(ModelHits(**report.model_dump(), role=role, counted=role != "chance"))
    names = {m for m, _ in members}
    judgements.rewrite(
        pa.concat_tables(answered) if answered else judgements.to_arrow([]),
        drop=lambda row: (
            row["mode"] == mode and row["model"] in names and row["question_id"] in asked
        ),
    )
    return AskSummary(
        step=step,
        run=str(run.root),
        candidates=len(items),
        skipped_refused=len(refused),
        skipped_dropped=len(skipped),
        models=hits,
        calls_made=sum(h.calls_made for h in hits),
        calls_if_every_pass=sum(h.calls_if_every_pass for h in hits),
        calls_cached=gateway.ledger.totals().cached - cached_before,
        seconds=round(time.monotonic() - started, 2),
    )


def filter_all(
    run: RunFolder, gateway: Gateway, options: FilterOptions, models: dict[str, list[str]]
) -> AskSummary:
    """Stage 1: the text-only ensemble, without images."""
    judge_model = (protect_models(models).get("judge") or [None])[0]
    return ask(
        run,
        gateway,
        text_members(options, models),
        TEXT_MODE,
        options.circular,
        options.max_tokens,
        judge_model,
    )


def consensus_all(
    run: RunFolder,
    gateway: Gateway,
    options: ConsensusOptions,
    models: dict[str, list[str]],
    skip: Collection[str] = (),
) -> AskSummary:
    """Stage 2: the vision-language ensemble, with images, on every candidate but `skip` (those
    the text-only step dropped: `text_dropped`)."""
    judge_model = (protect_models(models).get("judge") or [None])[0]
    return ask(
        run,
        gateway,
        vlm_members(models),
        VLM_MODE,
        options.circular,
        options.max_tokens,
        judge_model,
        skip,
    )


def _dropped(text: Hits | None, options: FilterOptions, llms: Sequence[str]) -> bool:
    """Whether the text-only rules drop a candidate with these hits."""
    verdict = Verdict(status="eligible")
    judge_text(text, options, verdict, llms)
    return verdict.status == "dropped"


def text_dropped(run: RunFolder, options: FilterOptions, models: dict[str, list[str]]) -> set[str]:
    """The candidates the text-only step's stored answers drop under `options`' rules: they are
    never selected, so the vision-language ensemble need not be asked about them."""
    candidates, _ = qc_candidates(run)
    n_options = {c.question_id: len(c.options) for c in candidates}
    members = text_members(options, models)
    text_counted = counted(members)
    llms = [m for m, role in members if role == "text_only"]
    stored = run.table(JudgementRecord).read(columns=StoredPass._fields)
    rows = [p for p in stored_passes(stored, TEXT_MODE) if p.model in text_counted]
    by_question = outcomes(rows, n_options)
    return {
        qid
        for qid, results in by_question.items()
        if qid in n_options and _dropped(count_hits(results, text_counted), options, llms)
    }


def _hits_for(
    qid: str, by_question: dict[str, dict], members: list[str], expected: bool
) -> Hits | None:
    return count_hits(by_question.get(qid, {}), members) if expected else None


def select_all(
    run: RunFolder,
    filter_options: FilterOptions,
    consensus_options: ConsensusOptions,
    select_options: SelectOptions,
    models: dict[str, list[str]],
    steps: Sequence[str] = ("filter", "consensus", "select"),
    catalogue: dict[str, ModelSpec] | None = None,
) -> SelectSummary:
    """Stage 3: hits, verdicts, difficulty and the selection for every candidate, into `scored`
    (rewritten whole: decisions are recomputed, never accumulated). `catalogue` resolves the
    models' names for the report's notes (default: the project's catalogue)."""
    all_candidates = sorted(run.table(CandidateRecord).records(), key=lambda c: c.question_id)
    reasons = refused_candidates(run)
    refused = set(reasons)
    n_options = {c.question_id: len(c.options) for c in all_candidates}
    text_all = text_members(filter_options, models)
    text_counted = counted(text_all)
    text_llms = [m for m, role in text_all if role == "text_only"]
    vlm = [m for m, _ in vlm_members(models)]
    # Only the columns outcomes read: prompts and raw answers are most of the table.
    judgements = run.table(JudgementRecord).read(columns=StoredPass._fields)
    text_rows = stored_passes(judgements, TEXT_MODE)
    vlm_rows = [j for j in stored_passes(judgements, VLM_MODE) if j.model in vlm]
    del judgements
    text_by_q = outcomes(text_rows, n_options)
    vlm_by_q = outcomes(vlm_rows, n_options)
    # An ensemble counts when its step is part of this run or its answers are stored.
    text_expected = "filter" in steps or any(j.model in text_counted for j in text_rows)
    vlm_expected = "consensus" in steps or bool(vlm_rows)
    evidence = (
        evidence_for(run, [c for c in all_candidates if c.question_id not in refused])
        if consensus_options.evidence
        else {}
    )
    items: list[Assessed] = []
    for c in all_candidates:
        if c.question_id in refused:
            continue
        text = _hits_for(c.question_id, text_by_q, text_counted, text_expected)
        vlm_hits = _hits_for(c.question_id, vlm_by_q, vlm, vlm_expected)
        if (
            vlm_hits is not None
            and len(vlm_hits.missing) == len(vlm)
            and _dropped(text, filter_options, text_llms)
        ):
            vlm_hits = None  # dropped by the text-only step, so not asked with the image
        verdict = judge(
            text,
            vlm_hits,
            filter_options,
            consensus_options,
            text_llms,
            evidence.get(c.question_id),
        )
        items.append(
            Assessed(
                c.question_id,
                c.image_id,
                c.dimension,
                c.answer,
                len(c.options),
                text,
                vlm_hits,
                verdict,
            )
        )
    dimensions = select(items, select_options)
    records = [_scored(item) for item in items]
    refused_codes: Counter[str] = Counter()
    for c in all_candidates:
        if c.question_id in refused:
            code, detail = reasons.get(c.question_id, ("refused", "refused by the generate stage"))
            refused_codes[f"refused:{code}"] += 1
            records.append(
                ScoredRecord(
                    question_id=c.question_id,
                    image_id=c.image_id,
                    dimension=c.dimension,
                    answer=c.answer,
                    hits_text=0,
                    hits_text_circular=None,
                    n_text_models=0,
                    text_hit_by=[],
                    hits_vlm=0,
                    hits_vlm_circular=None,
                    n_vlm_models=0,
                    vlm_hit_by=[],
                    flags=[],
                    difficulty=None,
                    decision="refused",
                    reason=f"refused by the generate stage ({code}): {detail}",
                    rank=None,
                )
            )
    run.table(ScoredRecord).rewrite(records, drop=lambda row: True)
    chance = {m: _rate(text_by_q, m, items) for m, role in text_all if role in ("blind", "chance")}
    summary = summarise(
        run,
        all_candidates,
        items,
        records,
        dimensions,
        text_counted,
        vlm,
        chance,
        refused_codes,
        list(consensus_options.bins),
        [m for m, role in text_all if role == "text_only"],
    )
    templates = [
        c.question_id
        for c in all_candidates
        if c.generator.startswith("template:") and c.question_id not in refused
    ]
    if consensus_options.evidence and templates:
        summary.evidence = evidence_counts(templates, evidence)
        summary.votes = vote_counts(templates, items)
    summary.warnings = ensemble_warnings(
        vlm if vlm_expected else [], text_all if text_expected else [], consensus_options, catalogue
    )
    if consensus_options.evidence and (unread := text_warning(all_candidates, refused)):
        summary.warnings.append(unread)
    return summary


def _rate(by_question: dict[str, dict], model: str, items: Sequence[Assessed]) -> float:
    answered = [
        by_question[i.question_id][model]
        for i in items
        if model in by_question.get(i.question_id, {})
        and by_question[i.question_id][model].error is None
    ]
    return round(sum(o.vanilla for o in answered) / len(answered), 4) if answered else 0.0


def _scored(item: Assessed) -> ScoredRecord:
    text, vlm = item.text, item.vlm
    return ScoredRecord(
        question_id=item.question_id,
        image_id=item.image_id,
        dimension=item.dimension,
        answer=item.answer,
        hits_text=text.vanilla if text else 0,
        hits_text_circular=text.circular if text else None,
        n_text_models=text.answered if text else 0,
        text_hit_by=list(text.hit_by) if text else [],
        hits_vlm=vlm.vanilla if vlm else 0,
        hits_vlm_circular=vlm.circular if vlm else None,
        n_vlm_models=vlm.answered if vlm else 0,
        vlm_hit_by=list(vlm.hit_by) if vlm else [],
        flags=item.verdict.flags,
        difficulty=item.verdict.difficulty,
        decision=item.decision,
        reason=item.reason,
        rank=item.rank,
    )


def ask_job(
    step: str,
    run_root: str,
    options: BaseModel,
    models: dict[str, list[str]],
    catalogue: str | None,
    skip: Sequence[str] = (),
) -> AskSummary:
    """The filter or consensus step's one job, in whichever process runs it: the gateway (and
    every local model it loads) is built there. `skip`: candidates consensus does not ask."""
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.gateway.usage_summary import record_usage

    gateway = gateway_for_run(run_root, stage=step, catalogue_path=catalogue)
    run = RunFolder(run_root)
    if isinstance(options, ConsensusOptions):
        summary = consensus_all(run, gateway, options, models, skip)
    else:
        assert isinstance(options, FilterOptions)
        summary = filter_all(run, gateway, options, models)
    record_usage(gateway, run_root)
    return summary


def write_report(stage: StageRun, step: str, summary: AskSummary | SelectSummary) -> Path:
    """`reports/qc.md`: this step's summary after those of the earlier steps of this run (the
    last ones the manifest records)."""
    from benchfoundry.tasks.qc.qc_report import qc_markdown

    run = RunFolder(stage.run)
    steps = [s for s in QC_STEPS if s in stage.stages] or list(QC_STEPS)
    manifest = run.read_manifest()
    found: dict[str, AskSummary | SelectSummary | None] = {step: summary}
    for earlier in ("filter", "consensus")[: QC_STEPS.index(step)]:
        recorded = manifest.get(earlier, {}).get("summary")
        if earlier in steps and recorded:
            found[earlier] = AskSummary.model_validate(recorded)
    path = run.root / "reports" / "qc.md"
    markdown = qc_markdown(found.get("filter"), found.get("consensus"), found.get("select"))
    atomic_write_bytes(path, markdown.encode("utf-8"))
    return path


def run_filter(stage: StageRun, mapper: Mapper = INLINE) -> AskSummary:
    """Quality control, step 1: the text-only ensemble's answers into `judgements`."""
    args = ("filter", stage.run, stage.options.filter, stage.models, stage.catalogue)
    summary = next(mapper.map(ask_job, [(args, 1)], label="filter"))
    write_report(stage, "filter", summary)
    return summary


def run_consensus(stage: StageRun, mapper: Mapper = INLINE) -> AskSummary:
    """Quality control, step 2: the vision-language ensemble's answers into `judgements`, on
    the candidates the text-only step's answers do not drop (all with `ask_dropped`)."""
    options = stage.options.consensus
    skip = (
        []
        if options.ask_dropped
        else sorted(text_dropped(RunFolder(stage.run), stage.options.filter, stage.models))
    )
    args = ("consensus", stage.run, options, stage.models, stage.catalogue, skip)
    summary = next(mapper.map(ask_job, [(args, 1)], label="consensus"))
    write_report(stage, "consensus", summary)
    return summary


def run_select(stage: StageRun, mapper: Mapper = INLINE) -> SelectSummary:  # noqa: ARG001
    """Quality control, step 3: decisions into `scored`, then the report of quality control
    (`reports/qc.md`) and its plots (`reports/qc.png`)."""
    from benchfoundry.gateway.assemble import default_catalogue
    from benchfoundry.tasks.qc.qc_report import plot

    run = RunFolder(stage.run)
    options = stage.options
    steps = [s for s in QC_STEPS if s in stage.stages] or list(QC_STEPS)
    summary = select_all(
        run,
        options.filter,
        options.consensus,
        options.select,
        stage.models,
        steps,
        default_catalogue(stage.catalogue),
    )
    reports = run.root / "reports"
    summary.report = str(reports / "qc.md")
    summary.plot = str(plot(summary, reports / "qc.png"))
    write_report(stage, "select", summary)
    return summary
