"""One reviewer's page: their pace, their decisions by kind, their batches, and their agreement
with each other reviewer (from the review status).

Pace: the reviewer's decisions in time order (every decision made, a changed one too); the gap
before each counts as active time unless it is longer than `IDLE_S` (a break). Decisions per hour
are the decisions that follow an active gap over that active time, so a break, a night or a
lunch does not slow anyone down. `lead_time_s` is what the page measured per decision (from
showing the sample to the decision); its median is shown beside."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from benchfoundry.core.records import ReviewRecord
from benchfoundry.decisions.status import ReviewStatus

IDLE_S = 600.0
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?$")


def seconds(stamp: str) -> float | None:
    """A decision's `decided_at` as seconds since the epoch (UTC unless it names an offset), or
    None where it is not an ISO time."""
    match = STAMP.match(stamp.strip())
    if not match:
        return None
    whole, fraction, zone = match.groups()
    try:
        moment = datetime.fromisoformat(whole + ("+00:00" if zone in (None, "Z") else zone))
    except ValueError:
        return None
    return moment.astimezone(UTC).timestamp() + (float(f"0.{fraction}") if fraction else 0.0)


def pace(decisions: Sequence[ReviewRecord], idle_s: float = IDLE_S) -> dict[str, Any]:
    """Active time, decisions per hour over it, and the median lead time (see the module)."""
    times = sorted(t for t in (seconds(r.decided_at) for r in decisions) if t is not None)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    active = [g for g in gaps if g <= idle_s]
    active_s = sum(active)
    leads = [r.lead_time_s for r in decisions if r.lead_time_s is not None]
    return {
        "decisions": len(decisions),
        "active_s": round(active_s, 1),
        "sessions": (1 + sum(g > idle_s for g in gaps)) if times else 0,
        "per_hour": round(len(active) / active_s * 3600, 1) if active_s > 0 else None,
        "median_lead_time_s": round(statistics.median(leads), 1) if leads else None,
        "first": min((r.decided_at for r in decisions), default=None),
        "last": max((r.decided_at for r in decisions), default=None),
    }


def reviewer_summary(
    name: str,
    reviews: Sequence[ReviewRecord],
    current: dict[str, dict[str, ReviewRecord]],
    state: ReviewStatus,
) -> dict[str, Any] | None:
    """What the reviewer page shows, or None for a name with no decision and no batch.
    `current` is `benchfoundry.decisions.reviews.latest` over `reviews`."""
    mine = [r for r in reviews if r.reviewer == name]
    batches = [b for b in state.batches if b["reviewer"] == name]
    if not mine and not batches:
        return None
    latest = [by[name] for by in current.values() if name in by]
    kinds = Counter(r.decision for r in latest if not r.adjudication)
    agreement = []
    for pair in state.pairs:
        if name in pair.reviewers:
            other = next((p for p in pair.reviewers if p != name), name)
            agreement.append(
                {
                    "reviewer": other,
                    "items": pair.items,
                    "agreement": pair.agreement,
                    "kappa": pair.kappa,
                }
            )
    return {
        "reviewer": name,
        "pace": pace(mine),
        "by_kind": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
        "questions": sum(1 for r in latest if not r.adjudication),
        "adjudications": sum(1 for r in latest if r.adjudication),
        "tools": dict(Counter(r.tool for r in mine)),
        "batches": batches,
        "agreement": sorted(agreement, key=lambda a: a["reviewer"]),
        "idle_s": IDLE_S,
    }
