"""How much the "possibly flawed" flag means: the evidence reader's verdicts on template keys
whose truth is known, as a hit rate on wrong keys and a false-alarm rate on right ones.

Wrong keys are of two sorts: those the generator wrote (few, once keys rest on two readings)
and seeded ones, each question asked again with one of its options the truth says is wrong
put as its key (the measure of what the flag would catch). An abstention (a kind the reader
does not answer, or a part it cannot read) flags nothing here; in a build, such an item falls
back to the vision-language ensemble's verdict."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from benchfoundry.core.letters import LETTERS, index_of
from benchfoundry.core.records import CandidateRecord
from benchfoundry.devtools.truth_check import check_item as truth
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.evidence import check, readings


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

    def rate(self, sort: str) -> float:
        return self.flagged[sort] / max(1, self.keys[sort])

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


def flag_rates(run: RunFolder, scene_of: dict[str, dict]) -> FlagRates:
    """The evidence reader's flag on every template key of `run`'s pictures (and on the seeded
    wrong keys), judged by the truth `scene_of` (image id -> scene)."""
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
        right = truth(c, scene).right
        verdict = check(c, reading) if reading is not None else None
        flagged = None if verdict is None else not verdict.agrees
        result.add("right" if right else "wrong", kind, flagged)
        line = f"{scene.get('scene_id')}: {c.question} keyed {c.options[index_of(c.answer)]!r}"
        if right and flagged:
            result.false_alarms.append(f"{line}: {verdict.read}")  # type: ignore[union-attr]
        if not right and not flagged:
            result.missed.append(line)
        for letter in LETTERS[: len(c.options)]:
            if letter == c.answer or truth(c, scene, letter).right:
                continue
            seeded = c.model_copy(update={"answer": letter})
            verdict = check(seeded, reading) if reading is not None else None
            result.add("seeded", kind, None if verdict is None else not verdict.agrees)
    return result
