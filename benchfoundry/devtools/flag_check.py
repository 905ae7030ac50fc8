"""How much the "possibly flawed" flag means: the evidence reader's verdicts on template keys
whose truth is known, as a hit rate on wrong keys and a false-alarm rate on right ones.

Wrong keys are of two sorts, kept apart: those the generator wrote itself (`wrong`: the ones
that matter) and seeded ones (`seeded`), each question asked again with one of its options the
truth says is wrong put as its key (the easy case: any reader of the truth catches them). An
abstention (a kind the reader does not answer, or a part it cannot read) flags nothing here and
counts as not caught; in a build, the models' vote still stands beside it (`tasks/qc/assess`).
`truth` says whether a key (at a letter) is right: the truth checkers' `check_item` by default,
the field pictures' `check_field` for them (a question a person would hesitate on is wrong)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from benchfoundry.core.letters import LETTERS, index_of
from benchfoundry.core.records import CandidateRecord
from benchfoundry.devtools.truth_check import Verdict, check_item
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.stats import wilson
from benchfoundry.tasks.qc.assess import MODELS_VOTE, Outcome, count_hits, judge
from benchfoundry.tasks.qc.evidence import Evidence, check, readings
from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions

# What an ensemble of three vision-language models may have done on a question: (first pass
# right, right under CircularEval) per model; the models' vote flags the first two
ENSEMBLES = {
    "none right": ((False, False), (False, False), (False, False)),
    "right first, not circular": ((True, False), (False, False), (False, False)),
    "one right": ((True, True), (False, False), (False, False)),
    "circular unknown": ((True, None), (False, None), (False, None)),
    "all right": ((True, True), (True, True), (True, True)),
}

# Whether a candidate's key at a letter (its own where None) is right, against a scene's truth
Truth = Callable[[CandidateRecord, dict, "str | None"], Verdict]


@dataclass
class FlagRates:
    """Per sort of key (right, wrong, seeded wrong): keys, flagged, and the reader's abstentions,
    overall and per template kind."""

    keys: Counter[str] = field(default_factory=Counter)
    flagged: Counter[str] = field(default_factory=Counter)
    abstained: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    false_alarms: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    verdicts: list[Evidence | None] = field(default_factory=list)  # the reader's, per key

    def rate(self, sort: str) -> float:
        return self.flagged[sort] / max(1, self.keys[sort])

    def interval(self, sort: str) -> tuple[float, float]:
        """The Wilson score interval (95%) of `rate(sort)`; (0, 1) where there are no keys."""
        return wilson(self.flagged[sort], self.keys[sort])

    def add(self, sort: str, kind: str, flagged: bool | None) -> None:
        tally = self.by_kind.setdefault(kind, Counter())
        self.keys[sort] += 1
        tally[f"{sort}"] += 1
        if flagged is None:
            self.abstained[sort] += 1
            tally[f"{sort} abstained"] += 1
        elif flagged:
            self.flagged[sort] += 1
            tally[f"{sort} flagged"] += 1

    def merged(self, other: FlagRates) -> FlagRates:
        """Both tallies together (sources pooled)."""
        out = FlagRates(
            self.keys + other.keys,
            self.flagged + other.flagged,
            self.abstained + other.abstained,
            {},
            self.false_alarms + other.false_alarms,
            self.missed + other.missed,
            self.verdicts + other.verdicts,
        )
        for kind in {*self.by_kind, *other.by_kind}:
            out.by_kind[kind] = self.by_kind.get(kind, Counter()) + other.by_kind.get(
                kind, Counter()
            )
        return out


def key_truth(candidate: CandidateRecord, scene: dict, letter: str | None = None) -> Verdict:
    """The truth checkers' verdict on the key (at `letter`)."""
    return check_item(candidate, scene, letter)


def flag_rates(run: RunFolder, scene_of: dict[str, dict], truth: Truth = key_truth) -> FlagRates:
    """The evidence reader's flag on every template key of `run`'s pictures (and on the seeded
    wrong keys), judged by `truth` against `scene_of` (image id -> scene)."""
    candidates = [
        c
        for c in run.table(CandidateRecord).records()
        if c.generator.startswith("template:") and c.image_id in scene_of
    ]
    read = readings(run, candidates)
    result = FlagRates()
    for c in candidates:
        kind = c.generator.removeprefix("template:")
        scene = scene_of[c.image_id]
        reading = read.get(c.image_id)
        right = truth(c, scene, None).right
        verdict = check(c, reading) if reading is not None else None
        result.verdicts.append(verdict)
        flagged = None if verdict is None else not verdict.agrees
        result.add("right" if right else "wrong", kind, flagged)
        line = f"{scene.get('scene_id')}: {c.question} keyed {c.options[index_of(c.answer)]!r}"
        if right and flagged:
            result.false_alarms.append(f"{line}: {verdict.read}")  # type: ignore[union-attr]
        if not right and not flagged:
            result.missed.append(f"{line}{' (abstained)' if flagged is None else ''}")
        for letter in LETTERS[: len(c.options)]:
            if letter == c.answer or truth(c, scene, letter).right:
                continue
            seeded = c.model_copy(update={"answer": letter})
            verdict = check(seeded, reading) if reading is not None else None
            result.add("seeded", kind, None if verdict is None else not verdict.agrees)
    return result


def models_vote_kept(verdicts: list[Evidence | None]) -> tuple[int, int, int]:
    """QC's flag (`assess.judge`) on each key under every ensemble outcome of `ENSEMBLES`, with
    the reader's verdict and with the reader off: (verdicts compared, those whose models' vote
    is the same both ways, those the reader flagged on top of the models). Signals add: the
    models' vote must never change with the reader."""
    options, consensus = FilterOptions(), ConsensusOptions()
    compared = same = added = 0
    for spec in ENSEMBLES.values():
        outcomes = {f"m{i}": Outcome(f"m{i}", v, c) for i, (v, c) in enumerate(spec)}
        hits = count_hits(outcomes, list(outcomes))
        off = judge(None, hits, options, consensus)
        for verdict in verdicts:
            on = judge(None, hits, options, consensus, evidence=verdict)
            compared += 1
            same += (MODELS_VOTE in on.codes) == (MODELS_VOTE in off.codes)
            added += MODELS_VOTE not in off.codes and "possibly_flawed" in on.flags
    return compared, same, added
