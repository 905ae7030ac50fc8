"""The automatic reviewer accepts only what neither of the flag's votes doubts: an item the
evidence reader reads otherwise, or one no vision-language model answers (though the reader
confirms its key), is left to people even when selection took flagged items; the scored
record keeps each vote's reason."""

from __future__ import annotations

from benchfoundry.tasks.qc.assess import Outcome, count_hits, judge
from benchfoundry.tasks.qc.evidence import Evidence
from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions, SelectOptions
from benchfoundry.tasks.qc.select import Assessed, select
from benchfoundry.tasks.qc.stage import _scored
from benchfoundry.tasks.review.stage import auto_reviews


def _hits(right: bool):
    results = {m: Outcome(m, right and m == "a", right and m == "a") for m in ("a", "b")}
    return count_hits(results, ["a", "b"])


def test_only_items_neither_vote_doubts_are_accepted(candidate_record):
    agrees = Evidence(True, "reads number 3, as the key says")
    differs = Evidence(False, "reads number 2 (option B), not the key's number 3")
    cases = {
        "reader_doubts": (True, differs),
        "models_miss": (False, agrees),
        "both_doubt": (False, differs),
        "neither": (True, agrees),
        "reader_abstains": (True, None),
    }
    items = [
        Assessed(
            q, f"img-{q}", "count", "A", 4, None, _hits(right),
            judge(None, _hits(right), FilterOptions(), ConsensusOptions(), evidence=evidence),
        )
        for q, (right, evidence) in cases.items()
    ]  # fmt: skip
    select(items, SelectOptions(select_flagged=True, balance_letters=False))
    scored = {i.question_id: _scored(i) for i in items}
    assert {q for q, s in scored.items() if s.decision == "selected"} == set(cases)
    candidates = [
        candidate_record(q, f"img-{q}", dimension="count", generator="template:count")
        for q in cases
    ]
    accepted = {r.question_id for r in auto_reviews(candidates, scored, set())}
    assert accepted == {"neither", "reader_abstains"}
    assert "not the key's number 3" in scored["reader_doubts"].reason
    assert "none of 2 vision-language models" in scored["models_miss"].reason
    both = scored["both_doubt"].reason
    assert "not the key's number 3" in both and "none of 2 vision-language models" in both
