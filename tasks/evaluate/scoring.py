"""Scores from stored answers: each model's accuracy (vanilla and CircularEval, per category
and difficulty, with intervals), MMStar's multi-modal gain and leakage, the paired comparisons
and rank ranges, the image-swap probes' scores, and on a release who built it (`in_build`).
Pure reading of `results` rows: nothing here asks a model."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from benchfoundry.core.records import CallFailureRecord, ResultRecord
from benchfoundry.tasks.evaluate.comparisons import Comparison, Outcomes, compare
from benchfoundry.tasks.evaluate.dataset import EvalDataset, EvalQuestion
from benchfoundry.tasks.evaluate.failures import NOT_ASKED, latest_reasons
from benchfoundry.tasks.evaluate.in_build import BuildRoles, build_roles, mark
from benchfoundry.tasks.evaluate.open_sets import JobRun
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.evaluate.probes import SwapProbe, chance_rate, score_swap
from benchfoundry.tasks.evaluate.stats import accuracy, gain_and_leakage
from benchfoundry.tasks.evaluate.summary import Gain, ModelScore, OpenScore


class ModelRun(JobRun):
    """What one job did on a multiple-choice set."""

    calls_made: int  # sent to the model (cache replays not counted)
    calls_if_every_pass: int
    calls_cached: int = 0  # answered from the response cache
    probe: str | None = None  # the probe it answered (image-swap), else the real evaluation
    stopped: str | None = None  # why the model was stopped before it was asked everything


def _outcomes(
    questions: Sequence[EvalQuestion], passes: dict[str, list[ResultRecord]]
) -> list[tuple[EvalQuestion, bool, bool, bool]]:
    """(question, vanilla right, circular right, refused) for every question of the dataset: one
    with no stored answer (its call failed, or it was never asked) is wrong, not left out."""
    out = []
    for q in questions:
        found = sorted(passes.get(q.item.question_id, []), key=lambda r: r.pass_index)
        if not found:
            out.append((q, False, False, False))
            continue
        n = len(q.item.options)
        circular = len(found) == n and all(r.correct for r in found)
        out.append((q, found[0].correct, circular, found[0].extracted == "Z"))
    return out


def _grouped(rows, key, circular: bool) -> dict[str, dict]:
    groups: dict[str, list] = defaultdict(list)
    for row in rows:
        groups[key(row[0]) or "uncategorised"].append(row)
    out = {}
    for name, group in sorted(groups.items()):
        out[name] = {"vanilla": accuracy([(q.image_id, v) for q, v, _, _ in group])}
        if circular:
            out[name]["circular"] = accuracy([(q.image_id, c) for q, _, c, _ in group])
    return out


def _passes(records: Sequence[ResultRecord], job: JobRun) -> dict[str, list[ResultRecord]]:
    passes: dict[str, list[ResultRecord]] = defaultdict(list)
    for r in records:
        if r.run_id == job.run_id and r.model == job.model:
            passes[r.question_id].append(r)
    return passes


def paired_outcomes(
    dataset: EvalDataset, records: Sequence[ResultRecord], job: JobRun, circular: bool
) -> Outcomes:
    """question id -> (its image, right under the mode's metric) of one job's answers."""
    rows = _outcomes(dataset.questions, _passes(records, job))
    return {q.item.question_id: (q.image_id, c if circular else v) for q, v, c, _ in rows}


def score(
    dataset: EvalDataset,
    records: Sequence[ResultRecord],
    job: ModelRun,
    circular: bool,
    failures: Sequence[CallFailureRecord] = (),
) -> ModelScore:
    """One job's scores over every question of the dataset; what has no answer is wrong and
    counted in `failed`, by the reason of its newest failure (`not asked` when none is stored)."""
    passes = _passes(records, job)
    rows = _outcomes(dataset.questions, passes)
    n = max(1, len(rows))
    reasons = latest_reasons(failures, job.run_id, job.model)
    missing = [q.item.question_id for q in dataset.questions if q.item.question_id not in passes]
    by_reason = dict(Counter(reasons.get(q, NOT_ASKED) for q in missing))
    refused = sum(z for *_, z in rows)
    vanilla_right = sum(v for _, v, _, _ in rows)
    return ModelScore(
        model=job.model,
        sees=job.sees,
        with_image=job.with_image,
        run_id=job.run_id,
        questions=len(rows),
        answered=len(rows) - len(missing),
        failed=len(missing),
        failed_by_reason=by_reason,
        stopped=getattr(job, "stopped", None),
        unanswered=len(missing),
        vanilla=accuracy([(q.image_id, v) for q, v, _, _ in rows]),
        circular=accuracy([(q.image_id, c) for q, _, c, _ in rows]) if circular else None,
        by_category=_grouped(rows, lambda q: q.item.l2_category or q.item.category, circular),
        by_difficulty=_grouped(rows, lambda q: q.difficulty, circular),
        by_language=_grouped(rows, lambda q: q.language, circular)
        if any(q.language != "en" for q, *_ in rows)
        else {},
        refusal_rate=refused / n,
        upper_bound=(vanilla_right + refused) / n,
        asked_now=job.asked,
        reused=job.reused,
        calls_made=job.calls_made,
        calls_cached=job.calls_cached,
        calls_if_every_pass=job.calls_if_every_pass,
        tokens_in=job.tokens_in,
        tokens_out=job.tokens_out,
        cost=job.cost,
    )


def _values(s: ModelScore | OpenScore, metric: str) -> tuple[float, dict[str, float]]:
    """A score's overall value and its value per category (capability, on an open-ended set)."""
    if isinstance(s, OpenScore):
        return s.total.mean, {c: v.mean for c, v in s.by_capability.items()}
    overall = s.circular if metric == "circular" else s.vanilla
    per = {c: a[metric].accuracy for c, a in s.by_category.items() if metric in a}
    return overall.accuracy, per  # type: ignore[union-attr]


def gains(
    scores: Sequence[ModelScore | OpenScore], options: EvaluateOptions, metric: str
) -> list[Gain]:
    """MG and ML of every model that ran with and without images, against the base LLM."""
    if not options.base_llm:
        return []
    by = {(s.model, s.with_image): _values(s, metric) for s in scores}
    base = by.get((options.base_llm, False))
    if base is None:
        return []
    out = []
    for model in options.models:
        v, wv = by.get((model, True)), by.get((model, False))
        if v is None or wv is None or model == options.base_llm:
            continue
        mg, ml = gain_and_leakage(v[0], wv[0], base[0])
        per = {}
        for category in sorted(v[1]):
            cmg, cml = gain_and_leakage(
                v[1][category], wv[1].get(category, 0.0), base[1].get(category, 0.0)
            )
            per[category] = {"mg": cmg, "ml": cml}
        out.append(
            Gain(
                model=model,
                base=options.base_llm,
                metric=metric,
                s_v=v[0],
                s_wv=wv[0],
                s_t=base[0],
                mg=mg,
                ml=ml,
                by_category=per,
            )  # fmt: skip
        )
    return out


def compare_scores(
    dataset: EvalDataset,
    records: Sequence[ResultRecord],
    done: Sequence[ModelRun],
    scores: Sequence[ModelScore],
    mode: str,
) -> tuple[list[Comparison], list[str]]:
    """Every pair of models asked with the same image setting, with their rank ranges set on
    `scores`; the comparisons and the notes on what could not be compared."""
    label = f"{dataset.name} {dataset.version or ''}".strip()
    circular = mode == "circular"
    comparisons: list[Comparison] = []
    notes: list[str] = []
    for with_image in (True, False):
        jobs = [(j, s) for j, s in zip(done, scores, strict=True) if j.with_image == with_image]
        if not jobs:
            continue
        entries = [(j.model, paired_outcomes(dataset, records, j, circular)) for j, _ in jobs]
        found = compare(entries, label, with_image, mode)
        comparisons += found.comparisons
        notes += found.notes
        for _, s in jobs:
            s.rank_best, s.rank_worst = found.ranks[s.model].best, found.ranks[s.model].worst
    return comparisons, notes


def score_probes(
    dataset: EvalDataset, records: Sequence[ResultRecord], done: Sequence[ModelRun], mode: str
) -> list[SwapProbe]:
    """Each probe run against the same model's run with its own image, on the mode's metric."""
    circular = mode == "circular"
    real = {j.model: j for j in done if j.probe is None and j.with_image}
    chances = {
        q.item.question_id: chance_rate(len(q.item.options), circular) for q in dataset.questions
    }
    return [
        score_swap(
            j,
            paired_outcomes(dataset, records, real[j.model], circular),
            paired_outcomes(dataset, records, j, circular),
            chances,
            mode,
        )
        for j in done
        if j.probe is not None and j.model in real
    ]


def mark_in_build(
    dataset: EvalDataset,
    scores: Sequence[ModelScore],
    catalogue: str | None,
    families: dict[str, list[str]] | None = None,
) -> BuildRoles:
    """On a release: the models that built it, by role; each score's `in_build` set (a model
    of a builder's family too, with `families`)."""
    from benchfoundry.gateway.assemble import default_catalogue

    if dataset.format != "release":
        return BuildRoles()
    built = build_roles(dataset.path)
    roles = mark({s.model for s in scores}, built, default_catalogue(catalogue), families)
    for s in scores:
        s.in_build = roles[s.model]
    return built
