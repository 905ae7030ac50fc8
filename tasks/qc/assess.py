"""From judgements to a verdict per candidate: hits over each ensemble, the text-only rules, the
possibly-flawed flag and the difficulty bin. Pure functions; every verdict carries its reason.

A model's outcome on a question is its first pass (vanilla, MMStar's hit) and, when it was asked
under CircularEval, whether every rotation was right (MMBench). A model whose call failed on a
question gave no answer there: it is left out of that question's count, not scored wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from benchfoundry.core.records import JudgementRecord
from benchfoundry.tasks.qc.evidence import Evidence
from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions

TEXT_MODE = "text_only"
VLM_MODE = "consensus"
# The possibly-flawed flag's two votes, each its own code in a verdict (and so in the scored
# record's reason and the summary's counts)
EVIDENCE_VOTE = "possibly_flawed_evidence"
MODELS_VOTE = "possibly_flawed_models"


@dataclass(frozen=True)
class Outcome:
    """One model on one question."""

    model: str
    vanilla: bool
    circular: bool | None  # None when not asked under CircularEval
    error: str | None = None


class StoredPass(NamedTuple):
    """The fields of a stored pass that its outcome depends on (a `JudgementRecord` has them
    too, with the prompt and raw answer that outcomes never read)."""

    question_id: str
    model: str
    mode: str
    pass_index: int
    correct: bool
    error_kind: str | None
    error: str | None


def stored_passes(table: pa.Table, mode: str) -> list[StoredPass]:
    """The passes of one mode in rows of the `judgements` table read with (at least) the
    columns of `StoredPass`: only those columns are turned into Python objects."""
    rows = table.select(list(StoredPass._fields))
    rows = rows.filter(pc.equal(rows.column("mode"), mode))
    columns = [rows.column(name).to_pylist() for name in StoredPass._fields]
    return [StoredPass(*values) for values in zip(*columns, strict=True)]


def outcomes(
    judgements: Iterable[JudgementRecord | StoredPass], n_options: dict[str, int]
) -> dict[str, dict[str, Outcome]]:
    """question_id -> model -> outcome, from the passes stored for one mode.

    Whether a model was asked under CircularEval is read from its stored passes, not from the
    current options: a right first pass followed by no second one means it was not. A failed
    first pass is a failure; a later failed pass leaves only the circular result unknown."""
    passes: dict[tuple[str, str], list[JudgementRecord | StoredPass]] = {}
    for row in judgements:
        passes.setdefault((row.question_id, row.model), []).append(row)
    single: set[str] = set()
    for (qid, model), rows in passes.items():
        rows.sort(key=lambda r: r.pass_index)
        first = rows[0]
        if len(rows) == 1 and first.correct and not first.error and n_options.get(qid, 1) > 1:
            single.add(model)
    out: dict[str, dict[str, Outcome]] = {}
    for (qid, model), rows in passes.items():
        first = rows[0]
        if first.pass_index != 0 or first.error:
            failure = f"{first.error_kind}: {first.error}" if first.error_kind else first.error
            outcome = Outcome(model, False, None, error=failure or "the first pass is missing")
        elif model in single:
            outcome = Outcome(model, first.correct, None)
        elif any(r.error for r in rows) or (
            all(r.correct for r in rows) and len(rows) != n_options.get(qid, -1)
        ):
            outcome = Outcome(model, first.correct, None)  # interrupted: circular unknown
        else:
            outcome = Outcome(model, first.correct, all(r.correct for r in rows))
        out.setdefault(qid, {})[model] = outcome
    return out


@dataclass(frozen=True)
class Hits:
    """What an ensemble did on one question."""

    vanilla: int
    circular: int | None  # None when no model's circular result is known
    answered: int  # models that gave an answer
    hit_by: tuple[str, ...]
    circular_by: tuple[str, ...]
    failed: tuple[str, ...]  # "model: error" of each model whose call failed
    missing: tuple[str, ...] = ()  # members never asked this question
    circular_unknown_hits: int = 0  # right first, circular result unknown (not asked, or cut)
    answered_by: tuple[str, ...] = ()  # the models that gave an answer


def count_hits(results: dict[str, Outcome], models: Sequence[str]) -> Hits:
    answered = [results[m] for m in models if m in results and results[m].error is None]
    failed = tuple(
        f"{m}: {results[m].error}" for m in models if m in results and results[m].error is not None
    )
    hit_by = tuple(o.model for o in answered if o.vanilla)
    circular_by = tuple(o.model for o in answered if o.circular)
    known = [o for o in answered if o.circular is not None]
    return Hits(
        vanilla=len(hit_by),
        circular=len(circular_by) if known else None,
        answered=len(answered),
        hit_by=hit_by,
        circular_by=circular_by,
        failed=failed,
        missing=tuple(m for m in models if m not in results),
        circular_unknown_hits=sum(1 for o in answered if o.circular is None and o.vanilla),
        answered_by=tuple(o.model for o in answered),
    )


@dataclass
class Verdict:
    """The outcome of the rules for one question, before selection."""

    status: str  # eligible, dropped, flagged, unassessed
    reasons: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)  # one short code per reason, for counting

    def add(
        self, code: str, reason: str, status: str | None = None, flag: str | None = None
    ) -> None:
        """Record one rule's finding: a drop overrides any status, a flag or `unassessed` only
        an eligible one."""
        if status == "dropped" or (status is not None and self.status == "eligible"):
            self.status = status
        if flag is not None and flag not in self.flags:
            self.flags.append(flag)
        self.codes.append(code)
        self.reasons.append(reason)

    flags: list[str] = field(default_factory=list)
    difficulty: str | None = None


def _names(models: Sequence[str]) -> str:
    return ", ".join(models) if models else "none"


def _failures(failed: Sequence[str], limit: int = 160) -> str:
    """The failures, each cut short: a reason stays one readable line."""
    return "; ".join(f if len(f) <= limit else f[: limit - 1] + "…" for f in failed)


def _unassessed(verdict: Verdict, hits: Hits, code: str, what: str, step: str) -> None:
    """Some member of the ensemble gave no answer: its rules cannot be applied."""
    if hits.missing:
        reason = f"not yet asked by the {what} model(s) {_names(hits.missing)}: run the {step} step"
        verdict.add(f"{code}_missing", reason, "unassessed")
    else:
        reason = f"every {what} call failed ({_failures(hits.failed)}); rerun to retry"
        verdict.add(f"{code}_failed", reason, "unassessed")


def judge_text(
    hits: Hits | None, options: FilterOptions, verdict: Verdict, llms: Sequence[str] = ()
) -> None:
    """Apply the chosen text-only rules (SEED-Bench, MMBench stage 1, MMStar). `llms` are the
    ensemble's language models: every rule asks what they know without the image, so when none
    of them answered, the option-artefact baselines alone do not decide."""
    if hits is None:
        return
    n = hits.answered
    if hits.missing or n == 0:
        _unassessed(verdict, hits, "text", "text-only", "filter")
        return
    if llms and not set(llms) & set(hits.answered_by):
        failed = [f for f in hits.failed if f.split(": ", 1)[0] in llms]
        reason = (
            f"no text-only LLM answered ({_failures(failed)}); the baselines "
            f"{_names(hits.answered_by)} alone cannot apply the rules; rerun to retry"
        )
        verdict.add("text_llm_failed", reason, "unassessed")
        return
    if "seed" in options.rules and hits.vanilla == n:
        reason = (
            f"seed: all {n} text-only models answered without the image ({_names(hits.hit_by)})"
        )
        verdict.add("seed", reason, "dropped", "text_answerable")
    limit = options.hit_limit(n)
    if "mmstar" in options.rules and hits.vanilla > limit:
        reason = (
            f"mmstar: {hits.vanilla} of {n} text-only models answered without the image, "
            f"more than {limit} ({_names(hits.hit_by)})"
        )
        verdict.add("mmstar", reason, "dropped", "text_answerable")
    circular = hits.circular
    if "mmbench" in options.rules and circular is not None and circular > options.majority * n:
        reason = (
            f"mmbench: {circular} of {n} text-only models answered every rotation "
            f"without the image ({_names(hits.circular_by)}); inspect by hand"
        )
        verdict.add("mmbench", reason, "flagged", "text_majority")


def judge_vlm(
    hits: Hits | None,
    options: ConsensusOptions,
    verdict: Verdict,
    evidence: Evidence | None = None,
) -> None:
    """Difficulty from hits, and the possibly-flawed flag from two independent votes, each
    recorded with its own code and reason: the evidence reader's (a template item whose key it
    reads otherwise: `possibly_flawed_evidence`) and the models' consensus (no model answers it,
    under CircularEval where known: `possibly_flawed_models`). Signals add; none silences
    another: the reader confirming a key does not clear the models' miss (a blind spot shared
    by the readings would otherwise silence the one signal that did not come from them), and
    the models answering does not clear the reader's doubt. With the reader off (`evidence`
    None) the models' vote flags exactly what it flagged alone."""
    if evidence is not None and not evidence.agrees:
        reason = f"possibly flawed: the evidence reader's own reading of the pixels {evidence.read}"
        verdict.add(EVIDENCE_VOTE, f"{reason}; review", "flagged", "possibly_flawed")
    if hits is None:
        return
    n = hits.answered
    if hits.missing or n == 0:
        _unassessed(verdict, hits, "vlm", "vision-language", "consensus")
        return
    verdict.difficulty = options.difficulty(hits.vanilla, n)
    # Flawed only when no model is right: under CircularEval where it is known, and a model
    # whose circular result is unknown counts as right when its first pass was.
    correct = (
        hits.circular + hits.circular_unknown_hits if hits.circular is not None else hits.vanilla
    )
    if correct == 0:
        how = "under CircularEval" if hits.circular is not None else "on the first pass"
        beside = (
            f" (the evidence reader {evidence.read}: the models' vote stands beside it)"
            if evidence is not None and evidence.agrees
            else ""
        )
        reason = (
            f"possibly flawed: none of {n} vision-language models answered it {how} "
            f"(wrong key, ambiguous options, or simply hard){beside}; review"
        )
        verdict.add(MODELS_VOTE, reason, "flagged", "possibly_flawed")


def judge(
    text: Hits | None,
    vlm: Hits | None,
    filter_options: FilterOptions,
    consensus_options: ConsensusOptions,
    text_llms: Sequence[str] = (),
    evidence: Evidence | None = None,
) -> Verdict:
    verdict = Verdict(status="eligible")
    judge_text(text, filter_options, verdict, text_llms)
    judge_vlm(vlm, consensus_options, verdict, evidence)
    return verdict
