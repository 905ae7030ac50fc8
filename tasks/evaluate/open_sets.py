"""The evaluate stage on an open-ended set (MM-Vet): each model answers in free text, the grader
(`options.evaluate.judge`) scores every answer k times (`gradings`), and every grading is a row
of `results` (`pass_index` is the grading), stored a batch of questions at a time. A rerun asks
only what is not stored: a question with all k gradings is reused; one with some is graded only
for the missing ones (its stored answer is kept); raising k grades only the new gradings.

Scores follow MM-Vet: per grading run, the mean grade over the questions (in each capability a
question has, and in its exact capability set); reported as the mean ± standard deviation over
the k runs. A grading that failed (replies the grader could not be read from) is kept with its
raw reply and left out of the means, and counted. A question with no grading stored at all (the
model's answer or the grading call failed after retries, or it was never asked) scores 0 in every
grading run, as VLMEvalKit scores a failed call, and is counted in `unanswered`: a score is over
the whole set."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel

from benchfoundry.answering.open_ended import OpenEngine, ToGrade
from benchfoundry.core.crash_points import crash_point
from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import ResultRecord
from benchfoundry.core.text import text_language
from benchfoundry.gateway import ModelCallError
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.dataset import EvalDataset, OpenQuestion, load_eval_dataset
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.evaluate.summary import GradingFailure, OpenScore, Spread

FAILURES_KEPT = 50  # failed gradings listed in a summary (all are in results)


class JobRun(BaseModel):
    """What one (model, with or without image) job of the evaluate stage did."""

    model: str
    with_image: bool
    run_id: str
    sees: str
    asked: int
    reused: int
    unanswered: int
    tokens_in: int
    tokens_out: int
    cost: float


def job_run(
    gateway,
    run_root: str,
    model: str,
    with_image: bool,
    rid: str,
    todo: int,
    total: int,
    unanswered: int,
) -> dict:
    """The fields every job reports, its usage recorded for the run (the model-usage report)."""
    from benchfoundry.gateway.usage_summary import record_usage

    used = gateway.ledger.totals()
    record_usage(gateway, run_root)
    return {
        "model": model, "with_image": with_image, "run_id": rid, "sees": gateway.sees(model),
        "asked": todo, "reused": total - todo, "unanswered": unanswered,
        "tokens_in": used.tokens_in, "tokens_out": used.tokens_out, "cost": used.cost,
    }  # fmt: skip


class OpenModelRun(JobRun):
    """What one job did on an open-ended set."""

    answer_calls: int
    grading_calls: int


def open_run_id(options: EvaluateOptions, with_image: bool, prompt_ids: Sequence[str]) -> str:
    """The configuration an open-ended evaluation's results are stored under: whether the image
    is shown, the answer and grader prompts, the grader, the grading tries and answer length."""
    return content_hash(
        ["open", with_image, *prompt_ids, options.judge, options.grading_tries,
         options.max_answer_tokens],
        length=12,
    )  # fmt: skip


def _record(rid: str, model: str, q: OpenQuestion, answer: str, grade) -> ResultRecord:
    return ResultRecord(
        run_id=rid,
        model=model,
        question_id=q.question_id,
        pass_index=grade.grading,
        option_order=[],
        response=answer,
        extracted=None,
        extracted_by="grader" if grade.score is not None else "grading_failed",
        correct=grade.score == 1.0,
        score=grade.score,
        category=",".join(q.capabilities) or None,
        l2_category=q.integration,
        grader_reply=grade.reply,
        grade_error=grade.error,
    )


def evaluate_open_model(
    run_root: str,
    path: str,
    options: EvaluateOptions,
    model: str,
    with_image: bool,
    catalogue: str | None,
) -> OpenModelRun:
    """One model's job on an open-ended set: answers, then k gradings of each, a batch of
    questions at a time."""
    from benchfoundry.gateway.assemble import gateway_for_run

    dataset = load_eval_dataset(path, options.limit)
    gateway = gateway_for_run(run_root, stage="evaluate", catalogue_path=catalogue)
    engine = OpenEngine(
        gateway,
        grader=options.judge or "",
        tries=options.grading_tries,
        with_image=with_image,
        max_answer_tokens=options.max_answer_tokens,
        languages={text_language(q.question) for q in dataset.open_questions},
    )
    rid = open_run_id(options, with_image, engine.prompt_ids)
    table = RunFolder(run_root).table(ResultRecord)
    stored: dict[str, dict[int, str | None]] = defaultdict(dict)  # question -> grading -> answer
    for r in table.records():
        if r.run_id == rid and r.model == model:
            stored[r.question_id][r.pass_index] = r.response
    wanted = range(options.gradings)
    todo = [
        q for q in dataset.open_questions if any(k not in stored[q.question_id] for k in wanted)
    ]
    answer_calls = grading_calls = unanswered = 0
    for start in range(0, len(todo), options.batch_size):
        chunk = todo[start : start + options.batch_size]
        answers: dict[str, str] = {}
        ask = []
        for q in chunk:
            known = next((a for a in stored[q.question_id].values() if a is not None), None)
            if known is not None:
                answers[q.question_id] = known
            else:
                ask.append(q)
        replies = engine.answer([(q.question, q.image) for q in ask], model)
        answer_calls += len(ask)
        for q, reply in zip(ask, replies, strict=True):
            if not isinstance(reply, ModelCallError):
                answers[q.question_id] = reply.text
        jobs = [
            (q, ToGrade(q.question, q.answer, answers[q.question_id], k))
            for q in chunk
            if q.question_id in answers
            for k in wanted
            if k not in stored[q.question_id]
        ]
        grades, calls = engine.grade([job for _, job in jobs])
        grading_calls += calls
        records = [
            _record(rid, model, q, answers[q.question_id], g)
            for (q, _), g in zip(jobs, grades, strict=True)
            if not g.call_failed
        ]
        failed = {q.question_id for (q, _), g in zip(jobs, grades, strict=True) if g.call_failed}
        unanswered += sum(q.question_id not in answers or q.question_id in failed for q in chunk)
        table.append(records)
        crash_point("evaluate.after_batch")
    return OpenModelRun(
        **job_run(gateway, run_root, model, with_image, rid, len(todo),
                  len(dataset.open_questions), unanswered),
        answer_calls=answer_calls,
        grading_calls=grading_calls,
    )  # fmt: skip


# --- scores -------------------------------------------------------------------------------------


def spread(runs: dict[int, list[float]], k: int) -> Spread:
    """Mean and population standard deviation over the grading runs that graded something."""
    means = [statistics.fmean(runs[i]) for i in range(k) if runs.get(i)]
    questions = max((len(v) for v in runs.values()), default=0)
    if not means:
        return Spread(mean=0.0, std=0.0, questions=0, runs=[])
    return Spread(
        mean=statistics.fmean(means),
        std=statistics.pstdev(means) if len(means) > 1 else 0.0,
        questions=questions,
        runs=means,
    )


def score_open(
    dataset: EvalDataset, records: Sequence[ResultRecord], job: OpenModelRun, k: int
) -> OpenScore:
    grades: dict[str, dict[int, ResultRecord]] = defaultdict(dict)
    for r in records:
        if r.run_id == job.run_id and r.model == job.model and r.pass_index < k:
            grades[r.question_id][r.pass_index] = r
    total: dict[int, list[float]] = defaultdict(list)
    by_capability: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_integration: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    failures: list[GradingFailure] = []
    failed = answered = missing = 0
    for q in dataset.open_questions:
        found = grades.get(q.question_id, {})
        if not found:  # its answer or grading call failed, or it was never asked: a 0, counted
            missing += 1
            for i in range(k):
                total[i].append(0.0)
                for c in q.capabilities:
                    by_capability[c][i].append(0.0)
                by_integration[q.integration][i].append(0.0)
            continue
        if any(r.score is not None for r in found.values()):
            answered += 1
        for i, r in sorted(found.items()):
            if r.score is None:
                failed += 1
                if len(failures) < FAILURES_KEPT:
                    failures.append(
                        GradingFailure(
                            question_id=q.question_id,
                            source_id=q.source_id,
                            grading=i,
                            reply=r.grader_reply,
                            why=r.grade_error or "no readable grade",
                        )
                    )
                continue
            total[i].append(r.score)
            for c in q.capabilities:
                by_capability[c][i].append(r.score)
            by_integration[q.integration][i].append(r.score)
    return OpenScore(
        model=job.model,
        sees=job.sees,
        with_image=job.with_image,
        run_id=job.run_id,
        questions=answered,
        unanswered=missing,
        gradings=k,
        total=spread(total, k),
        by_capability={c: spread(v, k) for c, v in sorted(by_capability.items())},
        by_integration={c: spread(v, k) for c, v in sorted(by_integration.items())},
        grading_failures=failed,
        failures=failures,
        asked_now=job.asked,
        reused=job.reused,
        answer_calls=job.answer_calls,
        grading_calls=job.grading_calls,
        tokens_in=job.tokens_in,
        tokens_out=job.tokens_out,
        cost=job.cost,
    )
