"""Selection: hardest first per dimension, answer letters balanced, a cap per image, a target
with its shortfall, and a decision with a reason for every candidate."""

from benchfoundry.tasks.qc.assess import Hits, Verdict
from benchfoundry.tasks.qc.options import SelectOptions
from benchfoundry.tasks.qc.select import Assessed, select


def _item(qid, dimension="d", answer="A", image=None, vlm_hits=0, n=4, status="eligible"):
    vlm = Hits(vlm_hits, vlm_hits, n, ("m",) * vlm_hits, (), ())
    return Assessed(
        question_id=qid,
        image_id=image or f"img-{qid}",
        dimension=dimension,
        answer=answer,
        n_options=4,
        text=None,
        vlm=vlm,
        verdict=Verdict(status=status, reasons=[f"{status} because"], codes=[status]),
    )


def test_hardest_first_up_to_the_target():
    items = [_item(f"q{h}", answer="ABCD"[h % 4], vlm_hits=h) for h in (3, 0, 2, 1, 4)]
    result = select(items, SelectOptions(target=3, balance_letters=False))
    chosen = sorted((i.rank, i.question_id) for i in items if i.decision == "selected")
    assert chosen == [(1, "q0"), (2, "q1"), (3, "q2")]
    held = {i.question_id: i.reason for i in items if i.decision == "held_back"}
    assert set(held) == {"q3", "q4"} and "target reached" in held["q3"]
    assert result[0].selected == 3 and result[0].shortfall == 0


def test_letter_balance_holds_back_a_letter_over_its_share():
    items = [_item(f"a{k}", answer="A", vlm_hits=0) for k in range(4)]
    items += [_item(f"b{k}", answer="B", vlm_hits=1) for k in range(4)]
    select(items, SelectOptions(target=4, max_per_image=None))
    # Four letters and a target of 4: each letter may take one place.
    chosen = [i for i in items if i.decision == "selected"]
    assert [i.answer for i in chosen] == ["A", "B"]
    assert all("letter balance" in i.reason for i in items if i.decision == "held_back")


def test_letter_slack_lets_a_letter_take_more():
    items = [_item(f"a{k}", answer="A") for k in range(4)]
    select(items, SelectOptions(target=4, letter_slack=1.0))
    assert sum(i.decision == "selected" for i in items) == 2


def test_cap_per_image_across_dimensions():
    items = [_item(f"x{k}", dimension="x", answer="ABCD"[k], image="same") for k in range(3)]
    items += [_item(f"y{k}", dimension="y", answer="ABCD"[k], image="same") for k in range(3)]
    result = select(items, SelectOptions(target=10, max_per_image=2))
    assert sum(i.decision == "selected" for i in items) == 2
    caps = [i for i in items if i.decision == "held_back"]
    assert len(caps) == 4 and all("image cap" in i.reason for i in caps)
    # Dimensions are filled scarcest first, ties by name: x takes the image's two places.
    assert {r.dimension: r.shortfall for r in result} == {"x": 8, "y": 10}


def test_shortfall_and_every_candidate_decided():
    items = [
        _item("ok1", answer="A"),
        _item("ok2", answer="B"),
        _item("drop", status="dropped"),
        _item("flag", status="flagged"),
        _item("none", status="unassessed"),
        _item("other", dimension="elsewhere"),
    ]
    result = select(items, SelectOptions(target=5, dimensions=["d"]))
    decisions = {i.question_id: i.decision for i in items}
    assert decisions == {
        "ok1": "selected",
        "ok2": "selected",
        "drop": "dropped",
        "flag": "flagged",
        "none": "unassessed",
        "other": "held_back",
    }
    assert all(i.reason for i in items)
    assert [(r.dimension, r.selected, r.shortfall) for r in result] == [("d", 2, 3)]
    assert "not one of the selection's dimensions" in items[-1].reason


def test_flagged_candidates_can_be_allowed_into_the_selection():
    items = [_item("flag", status="flagged"), _item("ok", answer="B", vlm_hits=2)]
    select(items, SelectOptions(target=5, select_flagged=True))
    assert items[0].decision == "selected" and items[0].rank == 1


def test_per_dimension_targets_override_the_default():
    items = [_item(f"q{k}", answer="ABCD"[k % 4]) for k in range(8)]
    result = select(items, SelectOptions(target=2, targets={"d": 6}))
    assert result[0].target == 6 and result[0].selected == 6
