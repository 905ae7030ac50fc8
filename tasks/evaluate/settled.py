"""The models of an evaluation with nothing left to ask: every question of every job it would
run (with and without the image, each probe) has its answers stored in the evaluation folder.
The preflight does not ask such a model its tiny question, so a finished evaluation runs again
(a report made afresh, a model added) with no request to its server, and with no server at all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchfoundry.core.errors import UserError
from benchfoundry.core.records import ResultRecord
from benchfoundry.storage.tables import RunFolder

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


def settled_models(stage: StageRun) -> set[str]:
    """The names (as the options give them) of the models with every answer stored; the judge
    too when every model is settled (nothing is left for it to read)."""
    from benchfoundry.tasks.evaluate.stage import (
        _blind,
        asked_dataset,
        dataset_path,
        plan,
        probe_plan,
        prompt_ids,
        run_id,
    )

    options = stage.options.evaluate
    table = RunFolder(stage.run).table(ResultRecord)
    if not options.models or not table.exists():
        return set()  # a first run: everything is left to ask
    try:
        dataset = asked_dataset(stage.run, str(dataset_path(stage)), options)
        blind = _blind(options, stage.catalogue)
    except (UserError, OSError, ValueError):
        return set()  # the stage itself says what is wrong
    if dataset.open_ended:
        return set()
    stored = {(r, m, q) for r, m, q, _ in table.key_set()}
    wanted = {q.item.question_id for q in dataset.questions}
    prompts = prompt_ids()
    jobs = [(m, run_id(options, w, prompts)) for m, w in plan(options, blind)]
    probing, _ = probe_plan(options, blind, dataset)
    jobs += [(m, run_id(options, True, prompts, p)) for m, p in probing]
    left = {m for m, rid in jobs if any((rid, m, q) not in stored for q in wanted)}
    settled = {m for m, _ in jobs} - left
    if options.judge and not left:
        settled.add(options.judge)
    return settled
