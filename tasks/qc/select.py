"""Selection (MMStar): a target per core dimension, hardest first, answer letters balanced and a
cap on questions per source image. Every candidate leaves with a decision and its reason."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from benchfoundry.tasks.qc.assess import Hits, Verdict
from benchfoundry.tasks.qc.options import SelectOptions


@dataclass
class Assessed:
    """A candidate with its hits and verdict, waiting for a decision."""

    question_id: str
    image_id: str
    dimension: str
    answer: str
    n_options: int
    text: Hits | None
    vlm: Hits | None
    verdict: Verdict
    decision: str = ""
    reason: str = ""
    code: str = ""  # the reason as a short code, for counting
    rank: int | None = None

    def share(self, hits: Hits | None, circular: bool = False) -> float:
        """Share of the ensemble that was right (0 with no ensemble, so it sorts as hard)."""
        if hits is None or hits.answered == 0:
            return 0.0
        value = hits.circular if circular and hits.circular is not None else hits.vanilla
        return value / hits.answered

    def hardness_key(self) -> tuple[float, float, float, str]:
        """Fewest VLM hits first, then fewest under CircularEval, then least text leakage."""
        return (
            self.share(self.vlm),
            self.share(self.vlm, circular=True),
            self.share(self.text),
            self.question_id,
        )


class DimensionSelection(BaseModel):
    dimension: str
    candidates: int
    eligible: int
    target: int
    selected: int
    shortfall: int
    held_back: dict[str, int]
    letters: dict[str, int]
    difficulty: dict[str, int]


def _letter_cap(target: int, letters: int, slack: float) -> int:
    return math.ceil(target * (1 + slack) / max(1, letters))


def select(items: Sequence[Assessed], options: SelectOptions) -> list[DimensionSelection]:
    """Decide every item in place; return what each dimension got."""
    for item in items:
        status = item.verdict.status
        flagged_ok = status == "flagged" and options.select_flagged
        if status == "eligible" or flagged_ok:
            continue
        item.decision = status
        item.reason = "; ".join(item.verdict.reasons) or status
        item.code = "+".join(item.verdict.codes) or status
    pool = [i for i in items if not i.decision]
    by_dimension: dict[str, list[Assessed]] = {}
    for item in items:
        by_dimension.setdefault(item.dimension, [])
    for item in pool:
        by_dimension[item.dimension].append(item)
    core = set(options.dimensions) if options.dimensions is not None else set(by_dimension)
    for item in pool:
        if item.dimension not in core:
            item.decision, item.code = "held_back", "not_core"
            item.reason = f"dimension '{item.dimension}' is not one of the selection's dimensions"
    per_image: Counter[str] = Counter()
    results = []
    order = sorted(core, key=lambda d: (len(by_dimension.get(d, [])), d))
    for dimension in order:
        eligible = sorted(by_dimension.get(dimension, []), key=Assessed.hardness_key)
        target = options.target_for(dimension)
        letters: Counter[str] = Counter()
        n_letters = max((i.n_options for i in eligible), default=1)
        cap = _letter_cap(target, n_letters, options.letter_slack)
        held: Counter[str] = Counter()
        chosen = 0
        for item in eligible:
            if chosen >= target:
                item.decision, item.code = "held_back", "target_reached"
                item.reason = f"target reached: {dimension} has its {target}"
                held["target_reached"] += 1
            elif (
                options.max_per_image is not None
                and per_image[item.image_id] >= options.max_per_image
            ):
                item.decision, item.code = "held_back", "image_cap"
                item.reason = (
                    f"image cap: {options.max_per_image} questions from image "
                    f"{item.image_id[:12]} are already selected"
                )
                held["image_cap"] += 1
            elif options.balance_letters and letters[item.answer] >= cap:
                item.decision, item.code = "held_back", "letter_balance"
                item.reason = f"letter balance: answer {item.answer} already has its {cap} of {target} in {dimension}"
                held["letter_balance"] += 1
            else:
                chosen += 1
                per_image[item.image_id] += 1
                letters[item.answer] += 1
                item.decision, item.rank = "selected", chosen
                item.code = item.verdict.difficulty or "unbinned"
                item.reason = _selected_reason(item, chosen, dimension)
        candidates = sum(1 for i in items if i.dimension == dimension)
        picked = [i for i in eligible if i.decision == "selected"]
        results.append(
            DimensionSelection(
                dimension=dimension,
                candidates=candidates,
                eligible=len(eligible),
                target=target,
                selected=chosen,
                shortfall=max(0, target - chosen),
                held_back=dict(sorted(held.items())),
                letters=dict(sorted(letters.items())),
                difficulty=dict(Counter(i.verdict.difficulty or "unbinned" for i in picked)),
            )
        )
    return sorted(results, key=lambda r: r.dimension)


def _selected_reason(item: Assessed, rank: int, dimension: str) -> str:
    parts = [f"selected #{rank} in {dimension}"]
    if item.vlm is not None and item.vlm.answered:
        parts.append(
            f"{item.verdict.difficulty}: {item.vlm.vanilla} of {item.vlm.answered} "
            "vision-language models right"
        )
    if item.text is not None and item.text.answered:
        parts.append(f"{item.text.vanilla} of {item.text.answered} text-only models right")
    if item.verdict.flags:  # selected though flagged (select_flagged): each vote's reason kept
        parts.append("flags: " + ", ".join(item.verdict.flags))
        parts.extend(item.verdict.reasons)
    return "; ".join(parts)
