"""The evaluate stage: models asked a dataset's multiple-choice questions through the answering
engine quality control uses (CircularEval with early stop, or vanilla; likelihood ranking for the
models set to it; a judge for answers the heuristic cannot read), their answers stored in
`results` a batch at a time. A rerun asks only what is not stored: an interrupted evaluation
resumes, a model added later runs alone, a new version of a dataset asks only the questions whose
content changed (results are keyed by the question's content id). Questions whose call failed
are not stored, so the next run asks them again.

With a base LLM (`base_llm`), each model is also asked without images, and the base LLM without
images, for MMStar's multi-modal gain and leakage. With the `image-swap` probe (`probes.py`), each
model that looks is asked again with another image of the dataset, under a configuration of its
own, to see whether it stays above chance without the right image.

An open-ended set (MM-Vet) is answered in free text and graded (`open_sets.py`); people's
grades of some answers correct the judge's scores (`debias.py`). Models asked
the same questions are compared pair by pair (`comparisons.py`); on a release, a model that took
part in building it is marked `in_build` (`in_build.py`). Scores are read from the stored answers
by `scoring.py`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from benchfoundry.answering.chance import analytic_chance
from benchfoundry.answering.engine import AnsweringEngine, QuestionResult, mcq_templates
from benchfoundry.core import interrupt, progress
from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.crash_points import crash_point
from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import CallFailureRecord, ResultRecord
from benchfoundry.decisions.suspects import default_items
from benchfoundry.storage.releases import release_at
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.comparisons import Comparison
from benchfoundry.tasks.evaluate.dataset import (
    FORMATS,
    EvalDataset,
    EvalDatasetError,
    load_eval_dataset,
)
from benchfoundry.tasks.evaluate.debias import debias, human_grades_for
from benchfoundry.tasks.evaluate.earlier import earlier_jobs
from benchfoundry.tasks.evaluate.failures import NOT_ASKED, SERVER_FAILING, Watch, reason_of
from benchfoundry.tasks.evaluate.failures import records as failure_records
from benchfoundry.tasks.evaluate.in_build import BuildRoles
from benchfoundry.tasks.evaluate.language_boards import headline, other_boards, with_languages
from benchfoundry.tasks.evaluate.languages import gaps
from benchfoundry.tasks.evaluate.open_sets import evaluate_open_model, job_run, score_open
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.evaluate.probes import (
    cannot_probe,
    swapped_questions,
)
from benchfoundry.tasks.evaluate.schedule import ask
from benchfoundry.tasks.evaluate.scoring import (
    ModelRun,
    compare_scores,
    gains,
    mark_in_build,
    paired_outcomes,
    score,
    score_probes,
)
from benchfoundry.tasks.evaluate.summary import (
    DatasetInfo,
    EvaluateSummary,
)

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


def dataset_path(stage: StageRun) -> Path:
    """The spec's dataset, else the build's latest release (`<publish.to>/<name>`)."""
    from benchfoundry.core.locations import is_url
    from benchfoundry.storage.releases import fetch

    options = stage.options.evaluate
    if options.dataset is not None:
        return fetch(options.dataset) if is_url(options.dataset) else Path(options.dataset)
    if stage.name:
        to = stage.options.publish.to
        if is_url(to):  # the name's latest version, fetched into the working cache
            return fetch(f"{str(to).rstrip('/')}/{stage.name}")
        return Path(to) / stage.name
    raise EvalDatasetError("give a dataset (options.evaluate.dataset, or --dataset)")


def run_id(
    options: EvaluateOptions, with_image: bool, prompt_id: str, probe: str | None = None
) -> str:
    """The evaluation configuration results are stored under: its mode, whether the image is
    shown, the prompt template and the judge; a probe's answers (`image-swap`) under their own."""
    parts = [options.mode, with_image, prompt_id, options.judge]
    return content_hash([*parts, probe] if probe else parts, length=12)


def prompt_ids() -> str:
    """The multiple-choice prompts of every language, as a configuration names them."""
    return "+".join(t.prompt_id for t in mcq_templates().values())


def plan(options: EvaluateOptions, blind: set[str] = frozenset()) -> list[tuple[str, bool]]:
    """(model, with image) pairs to run: every model as asked; with a base LLM, also every model
    that can see without images (not the `blind` ones, which see nothing either way) and the base
    LLM without images."""
    runs = [(m, options.with_image) for m in options.models]
    if options.base_llm:
        runs += [(m, False) for m in options.models if options.with_image and m not in blind]
        runs.append((options.base_llm, False))
    seen: set[tuple[str, bool]] = set()
    return [r for r in runs if not (r in seen or seen.add(r))]


def _records(results: Iterable[QuestionResult], rid: str, model: str) -> list[ResultRecord]:
    return [
        ResultRecord(
            run_id=rid,
            model=model,
            question_id=p.question_id,
            pass_index=p.pass_index,
            option_order=p.option_order,
            response=p.raw_response,
            extracted=p.extracted,
            extracted_by=p.extracted_by,
            correct=p.correct,
            score=None,
            category=r.item.category,
            l2_category=r.item.l2_category,
        )
        for r in results
        for p in r.passes
    ]


def asked_dataset(run_root: str, path: str, options: EvaluateOptions) -> EvalDataset:
    """The questions an evaluation asks: the dataset, or its anchor subset (`anchors:K`)."""
    dataset = load_eval_dataset(path, options.limit)
    if options.subset:
        weights = anchor_weights(run_root, options, dataset)
        dataset.questions = [q for q in dataset.questions if q.item.question_id in weights]
    return dataset


def anchor_weights(
    run_root: str, options: EvaluateOptions, dataset: EvalDataset
) -> dict[str, float]:
    """question id -> weight of the anchors `options.subset` asks, from the item analysis of
    this dataset version."""
    from benchfoundry.tasks.evaluate.anchors import (
        AnchorError,
        choose,
        parse_subset,
        read_parameters,
    )

    if dataset.open_ended:
        raise AnchorError("anchors are drawn for multiple-choice sets; this one is open-ended")
    params = read_parameters(Path(str(options.items or default_items(run_root))))
    if (params.dataset, params.version) != (dataset.name, dataset.version):
        raise AnchorError(
            f"the item analysis is of {params.dataset} {params.version or ''}, not of "
            f"{dataset.name} {dataset.version or ''}: anchors must come from the same version"
        )
    return choose(params, parse_subset(str(options.subset)))


def estimate_anchors(
    run_root: str, options: EvaluateOptions, dataset: EvalDataset, records, done
) -> list:
    """Per model, its accuracy on the whole release estimated from its anchor answers."""
    from benchfoundry.tasks.evaluate.anchors import estimate, read_parameters

    params = read_parameters(Path(str(options.items or default_items(run_root))))
    weights = anchor_weights(run_root, options, dataset)
    out = []
    for job in done:
        answers = {
            r.question_id: r.correct
            for r in records
            if r.run_id == job.run_id and r.model == job.model and r.pass_index == 0
        }
        if any(q in answers for q in weights):
            out.append(estimate(job.model, job.with_image, answers, weights, params))
    return out


def evaluate_model(
    run_root: str,
    path: str,
    options: EvaluateOptions,
    model: str,
    with_image: bool,
    catalogue: str | None,
    probe: str | None = None,
) -> ModelRun:
    """One model's job, in whichever process runs it: the questions it has no stored results
    for (an endpoint model's side by side, `schedule.py`), stored `batch_size` at a time as
    they finish; with `probe` (image-swap), each with another image of the set."""
    from benchfoundry.gateway.assemble import gateway_for_run

    dataset = asked_dataset(run_root, path, options)
    gateway = gateway_for_run(run_root, stage="evaluate", catalogue_path=catalogue)
    gateway.breakers_on = True  # a server failing every call is cut short
    gateway.timeout_retries = 1  # a hung call is asked once more, not max_attempts times
    if options.concurrency is not None:  # the command's setting, over the catalogue's
        gateway.catalogue[model] = gateway.spec(model).model_copy(
            update={"concurrency": options.concurrency}
        )
    engine = AnsweringEngine(gateway, judge=options.judge, with_image=with_image)
    rid = run_id(options, with_image, prompt_ids(), probe)
    table = RunFolder(run_root).table(ResultRecord)
    stored = {q for r, m, q, _ in table.key_set() if r == rid and m == model}
    questions = swapped_questions(dataset.questions) if probe else dataset.questions
    # An image's questions (and their twins) side by side: a batch then holds them together,
    # and a local model reads the image's part of the prompt once for all of them.
    todo = sorted(
        (q for q in questions if q.item.question_id not in stored), key=lambda q: q.image_id
    )
    gateway.prepare(model, [q.item.answer for q in dataset.questions])
    failures = RunFolder(run_root).table(CallFailureRecord)
    watch = Watch(answered=len(stored))
    breaker = gateway.breaker(model)
    image_of = {q.item.question_id: q.image_id if with_image else q.item.question_id for q in todo}
    every = unanswered = 0
    seen: set[str] = set()
    kept: list[QuestionResult] = []
    lost: list[tuple[str, str, str]] = []
    step = (
        f"evaluate {model}" + ("" if with_image else " (no image)") + (f" {probe}" if probe else "")
    )
    progress.report(step, 0, len(todo))

    def store() -> None:
        nonlocal unanswered
        if not kept and not lost:
            return
        missing = lost
        if interrupt.requested():  # calls refused because of Ctrl-C are no failure of the model
            missing = [f for f in lost if f[1] != interrupt.REASON]
        unanswered += len(missing)
        table.append(_records(kept, rid, model))
        failures.append(failure_records(rid, model, missing))
        kept.clear()
        lost.clear()
        crash_point("evaluate.after_batch")

    def stop() -> bool:
        return bool(watch.stopped or breaker.why or interrupt.requested())

    asking = ask(
        engine, [q.item for q in todo], model, options.mode == "circular", options.batch_size, stop
    )
    for results, calls in asking:
        answered, failed = _split(results, watch, image_of)
        kept += answered
        lost += failed
        before = len(seen)
        seen.update(r.item.question_id for r in results)
        every += calls
        progress.report(step, len(seen) - before, len(todo))  # what these results add
        if len(kept) + len(lost) >= options.batch_size:
            store()
    store()
    if interrupt.requested():
        raise interrupt.Interrupted(run_root)
    stopped = watch.stopped or breaker.why
    if stopped:
        reason = NOT_ASKED if watch.stopped else SERVER_FAILING
        rest = [
            (q.item.question_id, reason, stopped) for q in todo if q.item.question_id not in seen
        ]
        failures.append(failure_records(rid, model, rest))
        unanswered += len(rest)
    sent, cached = _sent(gateway, model)
    return ModelRun(
        **job_run(gateway, run_root, model, with_image, rid, len(todo), len(dataset.questions),
                  unanswered),
        calls_made=sent,
        calls_cached=cached,
        calls_if_every_pass=every,
        probe=probe,
        stopped=stopped,
    )  # fmt: skip


def _sent(gateway, model: str) -> tuple[int, int]:
    """(calls sent to the model, calls answered from the response cache) by this job: what
    the model's server received, and what a resumed run replayed instead of asking again."""
    used = gateway.ledger.entries.get((gateway.stage, gateway.spec(model).name))
    return (used.calls - used.cached, used.cached) if used is not None else (0, 0)


def _split(
    results: Sequence[QuestionResult], watch: Watch, image_of: dict[str, str]
) -> tuple[list[QuestionResult], list[tuple[str, str, str]]]:
    """The questions answered (every pass), and (question id, reason, detail) of those whose
    call failed; each outcome told to `watch` with what the question showed (its image), in the
    questions' order."""
    answered, failed = [], []
    for r in results:
        error = next((p for p in r.passes if p.error), None)
        if error is None:
            answered.append(r)
            watch.saw(None)
            continue
        reason = reason_of(error.error_kind, error.error)
        failed.append((r.item.question_id, reason, error.error or ""))
        watch.saw(reason, image_of.get(r.item.question_id, r.item.question_id), error.error)
    return answered, failed


# --- scores -------------------------------------------------------------------------------------


def _blind(options: EvaluateOptions, catalogue: str | None) -> set[str]:
    """The models that answer without looking (the blind baselines)."""
    from benchfoundry.gateway.assemble import default_catalogue
    from benchfoundry.gateway.models import resolve

    known = default_catalogue(catalogue)
    return {m for m in options.models if resolve(m, known).provider == "blind"}


def _check_open(dataset: EvalDataset, options: EvaluateOptions, blind: set[str]) -> None:
    """An open-ended set needs a grader, and models that write answers."""
    if not options.judge:
        raise EvalDatasetError(
            f"{dataset.described} is open-ended: its answers are graded by an LLM; give the "
            "grader (options.evaluate.judge, --judge MODEL)"
        )
    if blind:
        raise EvalDatasetError(
            f"{dataset.described} is open-ended; the blind baselines "
            f"({', '.join(sorted(blind))}) answer multiple-choice questions only"
        )


def probe_plan(
    options: EvaluateOptions, blind: set[str], dataset: EvalDataset
) -> tuple[list[tuple[str, str]], list[str]]:
    """(model, probe) pairs to run: every model asked with images that sees something (the blind
    baselines see nothing either way); and the notes on what could not run."""
    if not options.probes:
        return [], []
    if note := cannot_probe(dataset):
        return [], [note]
    models = [m for m in dict.fromkeys(options.models) if m not in blind]
    return [(m, p) for p in options.probes for m in models], []


def run(stage: StageRun, mapper: Mapper = INLINE) -> EvaluateSummary:
    """The whole stage: one job per (model, with or without image), then the scores."""
    options = stage.options.evaluate
    if not options.models:
        raise EvalDatasetError("name the models to evaluate (options.evaluate.models, --model)")
    if (release := release_at(Path(stage.run))) is not None:
        raise EvalDatasetError(
            f"{stage.run} is inside the published release {release}, and a release never "
            "changes: evaluate into a folder of its own, with the release as the dataset"
        )
    path = dataset_path(stage)
    dataset = asked_dataset(stage.run, str(path), options)  # fails here, before any model
    blind = _blind(options, stage.catalogue)
    if dataset.open_ended:
        _check_open(dataset, options, blind)
    human = human_grades_for(dataset, options.human_grades)  # a bad row fails here too
    jobs: list = [
        ((stage.run, dataset.path, options, model, with_image, stage.catalogue), 1)
        for model, with_image in plan(options, blind)
    ]
    probing, probe_notes = probe_plan(options, blind, dataset)
    jobs += [
        ((stage.run, dataset.path, options, model, True, stage.catalogue, probe), 1)
        for model, probe in probing
    ]
    job = evaluate_open_model if dataset.open_ended else evaluate_model
    # One model at a time: local models are large, and each job loads its own.
    ran = list(mapper.map(job, jobs, label="evaluate", total=len(jobs), ahead=1))
    done = [j for j in ran if getattr(j, "probe", None) is None]
    if not dataset.open_ended:  # what an earlier evaluate in this folder asked is kept
        done += earlier_jobs(
            stage.run,
            dataset,
            options.mode,
            done,
            {w: run_id(options, w, prompt_ids()) for w in (True, False)},
        )
    records = RunFolder(stage.run).table(ResultRecord).records()
    circular = options.mode == "circular"
    comparisons: list[Comparison] = []
    notes: list[str] = []
    language_gaps: list = []
    language_boards: list = []
    shown, board_language = dataset, None
    built = BuildRoles()
    probes = score_probes(dataset, records, ran, options.mode) if probing else []
    if dataset.open_ended:
        scores: list = []
        open_scores = [score_open(dataset, records, j, options.gradings) for j in done]
        chance, mode = None, "open"
    else:
        failures = RunFolder(stage.run).table(CallFailureRecord).records()
        shown, board_language = headline(dataset, options.pool_languages)
        scores = [score(shown, records, j, circular, failures) for j in done]
        comparisons, notes = compare_scores(shown, records, done, scores, options.mode)
        language_boards = other_boards(
            dataset, board_language, records, done, failures, options.mode
        )
        label = f"{dataset.name} {dataset.version or ''}".strip()
        language_gaps = gaps(
            [(j.model, j.with_image, paired_outcomes(dataset, records, j, circular)) for j in done],
            label,
            options.mode,
        )
        built = mark_in_build(dataset, scores, stage.catalogue, options.families)
        with_languages(scores, board_language, language_boards)
        open_scores = []
        chance, mode = (
            analytic_chance([len(q.item.options) for q in dataset.questions]),
            options.mode,
        )
    debiased, debias_notes = debias(dataset, records, open_scores, human, options.with_image)
    summary = EvaluateSummary(
        run=stage.run,
        dataset=DatasetInfo(
            path=dataset.path,
            format=FORMATS[dataset.format],
            name=dataset.name,
            version=dataset.version,
            questions=len(shown.questions) if not dataset.open_ended else dataset.size,
            languages=dict(Counter(q.language for q in dataset.questions))
            if board_language
            else {},
            headline=board_language,
            refused=dataset.refused,
            built_by=built.roles,
            built_by_notes=built.notes,
        ),
        mode=mode,
        scores=scores,
        open_scores=open_scores,
        grader=options.judge if dataset.open_ended else None,
        gains=gains([*scores, *open_scores], options, mode),
        chance_vanilla=chance.random_vanilla if chance else None,
        chance_circular=chance.random_circular if chance else None,
        results=str(Path(stage.run) / "results"),
        comparisons=comparisons,
        comparison_notes=notes,
        language_gaps=language_gaps,
        language_boards=language_boards,
        failures_allowed=options.allow_failures,
        probes=probes,
        probe_notes=probe_notes,
        debiased=debiased,
        debias_notes=debias_notes,
        human_grades=str(options.human_grades) if options.human_grades else None,
        anchors=estimate_anchors(stage.run, options, dataset, records, done)
        if options.subset
        else [],
    )
    from benchfoundry.tasks.evaluate.leaderboard import write_summaries

    files = write_summaries([summary], Path(stage.run) / "reports" / "evaluation")
    summary.report = files.html
    return summary
