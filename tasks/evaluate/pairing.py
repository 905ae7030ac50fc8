"""Which models of several evaluation runs are compared with which (`benchfoundry report`): those
asked the same items, meaning the same dataset name and version, the same mode and the same
image setting. Models of one run keep the comparisons the evaluate stage made; models of
different runs on the same items are paired from the runs' `results` tables (the dataset is read
again for the images its questions are asked on). Runs of different versions of a dataset are
refused, with a note that says why."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from benchfoundry.core.errors import UserError
from benchfoundry.core.records import ResultRecord
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.comparisons import (
    Comparison,
    Outcomes,
    RankRange,
    compare,
    setting,
)
from benchfoundry.tasks.evaluate.summary import EvaluateSummary, ModelScore


class RunComparisons(BaseModel):
    comparisons: list[Comparison] = []
    notes: list[str] = []
    ranks: dict[str, RankRange] = {}  # rank_key(run, model, with_image) -> its rank range


def rank_key(run: str, model: str, with_image: bool) -> str:
    return f"{run}\t{model}\t{with_image}"


def dataset_label(s: EvaluateSummary) -> str:
    return f"{s.dataset.name} {s.dataset.version or ''}".strip()


def metric(s: EvaluateSummary) -> str:
    return "circular" if s.mode == "circular" else "vanilla"


def outcomes(
    records: Sequence[ResultRecord],
    run_id: str,
    model: str,
    clusters: dict[str, str],
    circular: bool,
) -> Outcomes:
    """question id -> (its image, right under the metric) of one model's stored passes, for
    every question of `clusters` (question id -> image id): one with no answer is wrong."""
    passes: dict[str, list[ResultRecord]] = defaultdict(list)
    for r in records:
        if r.run_id == run_id and r.model == model and r.question_id in clusters:
            passes[r.question_id].append(r)
    out: Outcomes = {qid: (image, False) for qid, image in clusters.items()}
    for qid, found in passes.items():
        found.sort(key=lambda r: r.pass_index)
        if circular:
            right = len(found) == len(found[0].option_order) and all(r.correct for r in found)
        else:
            right = found[0].correct
        out[qid] = (clusters[qid], right)
    return out


def _clusters(path: str) -> dict[str, str]:
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset

    return {q.item.question_id: q.image_id for q in load_eval_dataset(path).questions}


def _refusals(summaries: Sequence[EvaluateSummary]) -> list[str]:
    """Runs of one dataset that are not paired: different versions, or different modes."""
    by_name: dict[str, dict[tuple[str | None, str], list[str]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for s in summaries:
        if s.scores:
            by_name[s.dataset.name][(s.dataset.version, s.mode)].append(Path(s.run).name)
    notes = []
    for name, kinds in sorted(by_name.items()):
        versions = {v for v, _ in kinds}
        if len(kinds) < 2:
            continue
        found = "; ".join(
            f"version {v or '(none)'}, {m}, in {', '.join(runs)}"
            for (v, m), runs in sorted(kinds.items(), key=str)
        )
        why = (
            "different versions hold different questions"
            if len(versions) > 1
            else "different modes count different things as right"
        )
        notes.append(
            f"{name}: runs not paired across ({found}): {why}; only models asked the same "
            "items (dataset version, mode, image setting) are compared"
        )
    return notes


def _stored(s: EvaluateSummary, with_image: bool) -> tuple[list[Comparison], list[str]]:
    """What the evaluate stage compared in one run, for one image setting."""
    where = f"{setting(with_image)})"
    return (
        [c for c in s.comparisons if c.with_image == with_image],
        [n for n in s.comparison_notes if where in n],
    )


def compare_runs(summaries: Sequence[EvaluateSummary]) -> RunComparisons:
    """The comparisons of every board the runs make up, and the pairings refused."""
    groups: dict[tuple, list[tuple[EvaluateSummary, ModelScore]]] = defaultdict(list)
    for s in summaries:
        for score in s.scores:
            key = (s.dataset.name, s.dataset.version, s.mode, score.with_image)
            groups[key].append((s, score))
    out = RunComparisons(notes=_refusals(summaries))
    for (_, _, _, with_image), members in groups.items():
        runs = list(dict.fromkeys(s.run for s, _ in members))
        if len(runs) > 1:
            try:
                _pair_runs(members, with_image, out)
                continue
            except (UserError, OSError) as exc:
                out.notes.append(
                    f"{dataset_label(members[0][0])}: runs {', '.join(Path(r).name for r in runs)} "
                    f"not paired with each other: the dataset could not be read again for its "
                    f"images ({exc}); each run's own comparisons are shown"
                )
        for s in {id(s): s for s, _ in members}.values():
            found, notes = _stored(s, with_image)
            out.comparisons += found
            out.notes += notes
        for s, score in members:
            if score.rank_best is not None and score.rank_worst is not None:
                out.ranks[rank_key(s.run, score.model, with_image)] = RankRange(
                    best=score.rank_best, worst=score.rank_worst
                )
    return out


def _pair_runs(
    members: Sequence[tuple[EvaluateSummary, ModelScore]], with_image: bool, out: RunComparisons
) -> None:
    first = members[0][0]
    clusters = _clusters(first.dataset.path)
    circular = first.mode == "circular"
    records: dict[str, list[ResultRecord]] = {}
    count = defaultdict(int)
    for _, score in members:
        count[score.model] += 1
    entries, keys = [], {}
    for s, score in members:
        if s.run not in records:
            records[s.run] = RunFolder(s.run).table(ResultRecord).records()
        name = score.model if count[score.model] == 1 else f"{score.model} [{Path(s.run).name}]"
        entries.append(
            (name, outcomes(records[s.run], score.run_id, score.model, clusters, circular))
        )
        keys[name] = rank_key(s.run, score.model, with_image)
    found = compare(entries, dataset_label(first), with_image, metric(first))
    out.comparisons += found.comparisons
    out.notes += found.notes
    out.ranks.update({keys[name]: r for name, r in found.ranks.items()})
