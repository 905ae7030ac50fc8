"""The QC summary's count of the flag's two votes, and its warning where the evidence reader
could read no text (no Tesseract): the abstention is counted and said, never silent."""

from __future__ import annotations

from benchfoundry.tasks.qc.assess import Outcome, count_hits, judge
from benchfoundry.tasks.qc.evidence import Evidence
from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions
from benchfoundry.tasks.qc.select import Assessed
from benchfoundry.tasks.qc.votes import text_warning, vote_counts


def test_votes_are_counted_apart():
    right = count_hits({"a": Outcome("a", True, True)}, ["a"])
    wrong = count_hits({"a": Outcome("a", False, False)}, ["a"])
    agrees, differs = Evidence(True, "reads it"), Evidence(False, "reads otherwise")
    cases = {"r": (right, differs), "m": (wrong, agrees), "b": (wrong, differs), "n": (right, None)}
    items = [
        Assessed(q, "i", "d", "A", 4, None, hits, judge(None, hits, FilterOptions(),
                 ConsensusOptions(), evidence=e))
        for q, (hits, e) in cases.items()
    ]  # fmt: skip
    assert vote_counts(list(cases), items) == {"reader_only": 1, "models_only": 1, "both": 1}


def test_without_tesseract_the_text_items_abstention_is_said(candidate_record, monkeypatch):
    candidates = [
        candidate_record("s", "i", generator="template:scene_content"),
        candidate_record("c", "i", generator="template:count"),
        candidate_record("refused", "i", generator="template:scene_content"),
    ]
    monkeypatch.setenv("PATH", "/nonexistent")
    warning = text_warning(candidates, {"refused"})
    assert warning is not None
    assert "Tesseract is not installed" in warning and "1 text template item(s) abstain" in warning
    assert text_warning([candidates[1]], set()) is None  # no text item: nothing to say
