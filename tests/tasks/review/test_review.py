"""The review stage and review decisions: batches per dimension and reviewer in MMStar's order,
a cross-checked share, exports that add only new candidates, the automatic reviewer, checked
decisions, conflicts and adjudication, and agreement figures checked against hand counts."""

from __future__ import annotations

import pytest

from benchfoundry.core.records import CandidateRecord, ReviewBatchRecord, ScoredRecord
from benchfoundry.decisions.outcomes import AUTO, latest, outcome
from benchfoundry.decisions.reviews import Decision, record
from benchfoundry.decisions.status import cohen_kappa, krippendorff_alpha, review_status
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
from benchfoundry.tasks.review.stage import export_batches


@pytest.fixture
def run(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record) -> RunFolder:
    """40 candidates in two dimensions: selected (half without flags), flagged and dropped."""
    run = RunFolder(tmp_path / "run")
    image = store_raw_image(run, image_bytes())
    candidates, scored = [], []
    for i in range(40):
        qid, dim = f"q{i:02d}", ("ocr" if i % 2 else "instance_identity")
        decision = ("selected", "flagged", "dropped", "selected")[i % 4]
        flags = ["length_outlier"] if decision == "selected" and i % 8 == 3 else []
        candidates.append(candidate_record(qid, image, dimension=dim))
        scored.append(
            scored_record(
                qid, image, dimension=dim, decision=decision, hits_text=i % 5, flags=flags
            )
        )
    run.table(CandidateRecord).append(candidates)
    run.table(ScoredRecord).append(scored)
    return run


def test_batches_follow_reviewers_dimensions_and_mmstars_order(run):
    options = ReviewOptions(
        reviewers=[Reviewer(name="ann", dimensions=["ocr"]), Reviewer(name="bo"), Reviewer(name="cy")],
        batch_size=4,
        cross_check=0.3,
    )  # fmt: skip
    summary = export_batches(str(run.root), options, "spec")
    batches = run.table(ReviewBatchRecord).records()
    scored = {s.question_id: s for s in run.table(ScoredRecord).records()}
    included = {q for q, s in scored.items() if s.decision in ("selected", "flagged")}
    assert summary.candidates == len(included) == 30
    firsts = [q for b in batches if not b.cross_check for q in b.question_ids]
    assert sorted(firsts) == sorted(included), "every included candidate once in a first batch"
    for b in batches:
        assert len(b.question_ids) <= 4
        if b.reviewer == "ann":
            assert b.dimension == "ocr"
        keys = [(scored[q].decision != "flagged", scored[q].hits_text) for q in b.question_ids]
        assert keys == sorted(keys), "flagged first, then by hits ascending"
    crossed = [q for b in batches if b.cross_check for q in b.question_ids]
    assert summary.cross_checked == len(crossed) > 0
    owner = {q: b.reviewer for b in batches if not b.cross_check for q in b.question_ids}
    assert all(b.reviewer != owner[q] for b in batches if b.cross_check for q in b.question_ids)
    # Same inputs, same batches; a new candidate gets a new batch, nothing else changes.
    again = export_batches(str(run.root), options, "spec")
    assert again.batches_added == 0 and again.batches == len(batches)


def test_a_new_candidate_is_batched_alone_and_no_reviewer_means_unassigned(
    run, candidate_record, store_raw_image, image_bytes, scored_record
):
    options = ReviewOptions(reviewers=[Reviewer(name="ann", dimensions=["ocr"])], cross_check=0)
    first = export_batches(str(run.root), options, "spec")
    assert first.unassigned == {"instance_identity": 10}  # selected; none flagged
    image = store_raw_image(run, image_bytes(seed=3))
    run.table(CandidateRecord).append([candidate_record("new", image, dimension="ocr")])
    run.table(ScoredRecord).append(
        [scored_record("new", image, dimension="ocr", decision="flagged")]
    )
    second = export_batches(str(run.root), options, "spec")
    assert second.batches_added == 1 and second.questions_batched_now == 1


def test_the_automatic_reviewer_accepts_only_what_passed_every_check(run):
    summary = STAGES["review"].run(
        StageRun(run=str(run.root), options={"review": {"auto": True}}, stages=["review"])
    )
    auto = [r for r in ReviewStore.open(run).records() if r.reviewer == AUTO]
    scored = {s.question_id: s for s in run.table(ScoredRecord).records()}
    assert {r.question_id for r in auto} == {
        q for q, s in scored.items() if s.decision == "selected" and not s.flags
    }
    assert summary.auto_accepted == len(auto) == 15 and all(r.tool == "auto" for r in auto)
    again = STAGES["review"].run(
        StageRun(run=str(run.root), options={"review": {"auto": True}}, stages=["review"])
    )
    assert again.auto_accepted_now == 0
    state = review_status(run)
    assert state.decisions == 0 and state.auto_decisions == 15, "auto is never a person"
    assert state.pairs == [] and state.states["auto"] == 15


def test_the_automatic_reviewer_leaves_questions_about_unlabeled_regions_to_people(
    tmp_path, image_bytes, store_raw_image, candidate_record, scored_record
):
    """A selected, unflagged template question about a photograph's regions (no label, not one
    flat colour), or about facts made without a second reading to check them, is never
    accepted automatically; text reading and flat shapes the two readings agree on are."""
    from benchfoundry.core.records import ExtractorInfo, Instance, OcrLine, VisualFactsRecord
    from benchfoundry.extractors.describe import FLAT

    run = RunFolder(tmp_path / "run")
    photo, drawing = store_raw_image(run, image_bytes()), store_raw_image(run, image_bytes(seed=5))

    def facts(image, flat, second=True):
        region = Instance(box=[10.0, 10.0, 60.0, 60.0], mask_area=2000, label=None,
                          attributes=["orange", "rectangular", "square",
                                      *([FLAT] if flat else []), "large", "center"],
                          dense_caption=None, score=0.9)  # fmt: skip
        line = OcrLine(text="YAMAHA", box=[70.0, 70.0, 120.0, 90.0], score=0.97)
        roles = ["segmenter", "ocr", *(["second_segmenter", "second_ocr"] if second else [])]
        infos = [ExtractorInfo(role=r, backend="b", model=None, version="1", config_hash="c")
                 for r in roles]  # fmt: skip
        return VisualFactsRecord(image_id=image, config_hash="c", captions=[],
                                 instances=[region], ocr_lines=[line], extractors=infos,
                                 second_instances=[region] if second else [],
                                 second_ocr_lines=[line] if second else [])  # fmt: skip

    unchecked = store_raw_image(run, image_bytes(seed=9))
    run.table(VisualFactsRecord).append(
        [facts(photo, False), facts(drawing, True), facts(unchecked, True, second=False)]
    )
    made = {"count-photo": (photo, "template:count"), "text-photo": (photo, "template:read_text"),
            "count-drawing": (drawing, "template:count"), "seed-photo": (photo, "seed:tsv"),
            "count-unchecked": (unchecked, "template:count"),
            "text-unchecked": (unchecked, "template:read_text")}  # fmt: skip
    run.table(CandidateRecord).append(
        [candidate_record(q, image, generator=g) for q, (image, g) in made.items()]
    )
    run.table(ScoredRecord).append([scored_record(q, image) for q, (image, _) in made.items()])
    summary = STAGES["review"].run(
        StageRun(run=str(run.root), options={"review": {"auto": True}}, stages=["review"])
    )
    accepted = {r.question_id for r in ReviewStore.open(run).records() if r.reviewer == AUTO}
    assert accepted == {"text-photo", "count-drawing", "seed-photo"}
    assert summary.auto_withheld == {"unlabeled_regions": 1, "no_second_reading": 2}
    assert any("Left to people" in line for line in summary.lines())


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (Decision("nope", "ann", "accept"), "no candidate with question id 'nope'"),
        (Decision("q00", "ann", "approve"), "decision 'approve' is not one of"),
        (Decision("q00", "ann", "reject"), "a rejection needs a reason"),
        (Decision("q00", "ann", "fix_answer", new_answer="E"), "not one of the options' letters"),
        (Decision("q00", "ann", "fix_answer", new_answer=""), "not one of the options' letters"),
        (Decision("q00", "ann", "fix_answer", new_answer="BC"), "not one of the options' letters"),
        (
            Decision("q00", "ann", "edit", new_question="Q?", new_answer="AB"),
            "not one of the options' letters",
        ),
        (Decision("q00", "ann", "fix_answer", new_answer="A"), "already A"),
        (
            Decision("q00", "ann", "edit", new_options=["x", "x", "y", "z"]),
            "each filled and different",
        ),
        (Decision("q00", "ann", "edit", new_options=["x"]), "at least two"),
        (Decision("q00", "ann", "move"), "names the new dimension"),
        (Decision("q00", "ann", "move", new_dimension="nonsense"), "not a dimension"),
        (Decision("q00", AUTO, "accept"), "not 'auto'"),
        (Decision("q00", "ann", "edit", new_question=7), "new_question is text, not int"),  # type: ignore[arg-type]
        (Decision("q00", "ann", "edit", new_options="a b"), "a list of texts"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_decision_is_refused_with_its_reason_and_changes_nothing(run, decision, message):
    added, _, refused = record(run, [decision], "file", ["ocr", "instance_identity"])
    assert added == 0 and len(refused) == 1 and message in refused[0]
    assert ReviewStore.open(run).count() == 0


def test_conflicts_adjudication_history_and_stale_decisions(run):
    dims = ["ocr", "instance_identity"]
    record(
        run,
        [Decision("q00", "ann", "accept"), Decision("q00", "bo", "reject", reason="ambiguous")],
        "file",
        dims,
    )
    assert record(run, [Decision("q00", "ann", "accept")], "file", dims)[:2] == (0, 1), "repeat"
    state = review_status(run)
    assert state.conflicts == ["q00"]
    record(
        run, [Decision("q00", "lead", "reject", reason="ambiguous", adjudication=True)], "cli", dims
    )
    current = latest(ReviewStore.open(run).records())
    assert outcome(current["q00"])[0] == "adjudicated"
    assert review_status(run).conflicts == []
    record(run, [Decision("q00", "ann", "reject", reason="changed my mind")], "file", dims)
    history = [r for r in ReviewStore.open(run).records() if r.reviewer == "ann"]
    assert [r.decision for r in sorted(history, key=lambda r: r.decided_at)] == ["accept", "reject"]
    # The candidate changes after ann decided: her decision is flagged as stale.
    c = next(c for c in run.table(CandidateRecord).records() if c.question_id == "q00")
    run.table(CandidateRecord).rewrite([c.model_copy(update={"question": "Another question?"})])
    assert "q00 (ann)" in review_status(run).stale


def test_review_status_says_decided_for_one_persons_decision_and_agreed_for_two(run):
    """`benchfoundry review status`, as a process: a question one person rejected is `decided`
    (nobody agreed with anyone), one that two people accepted is `agreed`."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    dims = ["ocr", "instance_identity"]
    decisions = [
        Decision("q00", "ann", "reject", reason="ambiguous"),
        Decision("q01", "ann", "accept"),
        Decision("q01", "bo", "accept"),
        Decision("q02", "ann", "accept"),
        Decision("q02", "bo", "reject", reason="ambiguous"),
    ]
    assert record(run, decisions, "file", dims)[2] == []
    done = subprocess.run(
        [str(Path(sys.executable).parent / "benchfoundry"), "review", "status", "--out",
         str(run.root), "--json"], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["states"] == {"agreed": 1, "conflict": 1, "decided": 1}
    assert state["by_language"]["en"]["states"] == state["states"]
    report = Path(state["report"]).read_text(encoding="utf-8")
    assert "States: agreed 1, conflict 1, decided 1" in report
    assert "decided: one person's decision, nobody to agree with" in report


def test_agreement_figures_match_hand_counts(run):
    dims = ["ocr", "instance_identity"]
    a = ["accept", "accept", "reject", "accept", "reject", "accept"]
    b = ["accept", "reject", "reject", "accept", "reject", "reject"]
    decisions = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        q = f"q{i:02d}"
        decisions += [Decision(q, "ann", x, reason="r" if x == "reject" else None)]
        decisions += [Decision(q, "bo", y, reason="r" if y == "reject" else None)]
    record(run, decisions, "file", dims)
    state = review_status(run)
    (pair,) = state.pairs
    assert pair.items == 6 and pair.agreement == pytest.approx(4 / 6, abs=1e-4)
    # Cohen: p_o = 4/6; p_e = (4/6)(2/6) + (2/6)(4/6) = 16/36; kappa = (24/36 - 16/36)/(20/36) = 0.4
    assert pair.kappa == pytest.approx(0.4, abs=1e-4)
    assert set(state.by_dimension) == {"ocr", "instance_identity"}
    # Krippendorff (nominal): 12 values, accept 6 and reject 6; the two disagreeing units give
    # 4 off-diagonal coincidences; alpha = 1 - (n - 1) * 4 / (2 * 6 * 6)
    assert state.alpha == pytest.approx(1 - 11 * 4 / 72, abs=1e-4)
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None
    assert krippendorff_alpha([["x", "x"], ["x", "x"]]) is None


def test_batch_parts_number_a_reviewers_batches_in_review_order(run):
    options = ReviewOptions(reviewers=[Reviewer(name="ann")], batch_size=4, cross_check=0)
    export_batches(str(run.root), options, "spec")
    batches = run.table(ReviewBatchRecord).records()
    by_dim: dict[str, list[ReviewBatchRecord]] = {}
    for b in batches:
        by_dim.setdefault(b.dimension, []).append(b)
    scored = {s.question_id: s for s in run.table(ScoredRecord).records()}
    for group in by_dim.values():
        group.sort(key=lambda b: b.part)
        assert [b.part for b in group] == list(range(1, len(group) + 1))
        ordered = [q for b in group for q in b.question_ids]
        keys = [(scored[q].decision != "flagged", scored[q].hits_text) for q in ordered]
        assert keys == sorted(keys)


def test_a_move_from_any_tool_must_name_a_dimension_of_the_taxonomy(run):
    """Files and the CLI are held to the taxonomy as the app is (no dimensions passed), and a
    question moves only to a dimension of its own medium (a picture's never to a clip's)."""
    added, _, refused = record(
        run, [Decision("q00", "ann", "move", new_dimension="nonsense")], "file"
    )
    assert added == 0 and "'nonsense' is not a dimension of the taxonomy" in refused[0]
    to_clips = Decision("q00", "ann", "move", new_dimension="action_recognition")
    added, _, refused = record(run, [to_clips], "file")  # a picture's question, a clip's dimension
    assert added == 0 and "another medium" in refused[0] and "text_understanding" in refused[0]
    moved = Decision("q00", "ann", "move", new_dimension="text_understanding")  # seed_bench
    assert record(run, [moved], "file")[0] == 1


def test_suspect_items_go_back_to_people_whatever_their_decision(run, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchfoundry.tasks.evaluate.items import SCHEMA

    options = ReviewOptions(reviewers=[Reviewer(name="ann"), Reviewer(name="bo")], batch_size=4)
    first = export_batches(str(run.root), options, "spec")  # the ordinary hand-off
    assert first.suspects == {}
    rows = [
        {"question_id": q, "suspect": s, "why": w, "respondents": 6, "right": 2}
        for q, s, w in [
            ("q00", True, "discrimination -0.80 ± 0.40: able respondents fail it"),
            ("q02", True, "discrimination +0.05 ± 0.30: near zero"),  # dropped by qc
            ("q04", False, None),
            ("elsewhere", True, "an item of another run"),
        ]
    ]
    items = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), items)
    suspects = options.model_copy(update={"suspects": str(items)})
    summary = export_batches(str(run.root), suspects, "spec")
    assert set(summary.suspects) == {"q00", "q02"} and summary.suspects_unknown == ["elsewhere"]
    assert summary.candidates == 2 and summary.questions_batched_now >= 2
    new = [
        b for b in run.table(ReviewBatchRecord).records() if set(b.question_ids) <= {"q00", "q02"}
    ]
    assert {q for b in new for q in b.question_ids} == {"q00", "q02"}, "q00 again, though batched"
    assert "able respondents fail it" in summary.markdown()
    again = export_batches(str(run.root), suspects, "spec")
    assert again.batches_added == 0, "the same suspects give the same batches"


def test_cohen_kappa_is_scikit_learns():
    import random

    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(2, 40)
        labels = rng.sample(["accept", "reject", "fix", "move"], rng.randint(2, 4))
        a = [rng.choice(labels) for _ in range(n)]
        b = [x if rng.random() < 0.6 else rng.choice(labels) for x in a]
        if len(set(a) | set(b)) < 2:
            continue
        ours, theirs = cohen_kappa(a, b), float(cohen_kappa_score(a, b))
        assert (ours is None and theirs != theirs) or ours == pytest.approx(theirs, abs=1e-4)
