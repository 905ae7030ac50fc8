"""Evaluations that add up: `evaluate` into a folder that an earlier evaluation wrote keeps the
models that one asked. A model of the earlier summary that this run did not ask, on the same
dataset version and mode and under the same configuration (prompts, judge: its `run_id`), has its
stored answers scored beside this run's, so the folder's summary, board and report list every
model asked in it, compared on the same items."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.dataset import EvalDataset
from benchfoundry.tasks.evaluate.scoring import ModelRun
from benchfoundry.tasks.evaluate.summary import EvaluateSummary


def earlier_jobs(
    run_root: str,
    dataset: EvalDataset,
    mode: str,
    done: Sequence[ModelRun],
    run_ids: dict[bool, str],
) -> list[ModelRun]:
    """The earlier summary's models (with or without the image) this run did not ask, whose
    answers are stored under this configuration (`run_ids`: with_image -> run id), as jobs
    that asked nothing now."""
    recorded = RunFolder(run_root).read_manifest().get("evaluate", {}).get("summary")
    if not recorded:
        return []
    try:
        before = EvaluateSummary.model_validate(recorded)
    except ValidationError:  # a summary of an older shape: nothing to add
        return []
    if (before.dataset.name, before.dataset.version, before.mode) != (
        dataset.name,
        dataset.version,
        mode,
    ):
        return []
    asked = {(j.model, j.with_image) for j in done}
    return [
        ModelRun(
            model=s.model,
            with_image=s.with_image,
            run_id=s.run_id,
            sees=s.sees,
            asked=0,
            reused=s.answered or s.questions - s.failed,
            unanswered=s.failed,
            tokens_in=0,
            tokens_out=0,
            cost=0.0,
            calls_made=0,
            calls_if_every_pass=0,
            stopped=s.stopped,
        )  # fmt: skip
        for s in before.scores
        if (s.model, s.with_image) not in asked and s.run_id == run_ids[s.with_image]
    ]
