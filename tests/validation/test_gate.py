"""The publish gate: a good release table passes; a table with one kind of defect is refused by
exactly the expectation for it, the failing rows are named, and the Data Docs site is written
either way."""

from __future__ import annotations

import pytest

from benchfoundry.validation.gate import GateRow, checks_file, run_gate

DIMENSION = "instances_counting"


def good_rows(n: int = 16) -> list[GateRow]:
    return [
        GateRow(
            index=i,
            question_id=f"q{i:02d}",
            question=f"How many things are in picture {i}?",
            options=[f"{i} kiwis", f"{i} pears", f"{i} plums", f"{i} limes"],
            answer="ABCD"[i % 4],
            dimension=DIMENSION,
            human_reviewed=True,
            image_decodes=True,
        )
        for i in range(n)
    ]


def gate(rows, tmp_path, **options):
    settings = {"letter_tolerance": 0.15, "longest_answer_share": 0.5, "allow_unreviewed": False}
    return run_gate(rows, dimensions=[DIMENSION], docs=tmp_path / "docs", **(settings | options))


def _with(rows: list[GateRow], i: int, **fields) -> list[GateRow]:
    rows[i] = rows[i].model_copy(update=fields)
    return rows


def test_a_good_table_passes_and_writes_data_docs(tmp_path):
    result = gate(good_rows(), tmp_path)
    assert result.success, result.message()
    ids = {c.id.split("[")[0] for c in result.checks}
    assert ids == {c["id"] for c in checks_file()}, "every check of release_gate.yaml ran"
    index = tmp_path / "docs" / "index.html"
    assert index.is_file() and "publish_gate" in index.read_text(encoding="utf-8")


def _defect(name: str) -> list[GateRow]:
    rows = good_rows()
    if name == "unique_index":
        return _with(rows, 3, index=2)
    if name == "unique_question_id":
        return _with(rows, 3, question_id="q02")
    if name == "answer_among_options":
        return _with(rows, 3, answer="F")
    if name == "option_count":
        return _with(rows, 3, options=["3 kiwis"], answer="A")
    if name == "distinct_options":
        return _with(rows, 3, options=["3 kiwis", " 3 Kiwis", "3 plums", ""])
    if name == "question_not_empty":
        return _with(rows, 3, question="  \n")
    if name == "answer_not_in_question":
        return _with(rows, 3, question="Are there 3 limes in the picture?")  # D is '3 limes'
    if name == "image_decodes":
        return _with(rows, 3, image_decodes=False)
    if name == "video_decodes":
        return _with(rows, 3, video_decodes=False)
    if name == "twin_pairs":  # a twin of q03 with another key (a twin of q05 passes)
        twin = rows[3].model_copy(update={"index": 99, "language": "zh", "answer": "A"})
        return [*rows, rows[5].model_copy(update={"index": 98, "language": "zh"}), twin]
    if name == "dimension_in_taxonomy":
        return _with(rows, 3, dimension="made_up")
    if name == "human_decision":
        return _with(rows, 3, human_reviewed=False)
    if name == "letter_balance":
        return [r.model_copy(update={"answer": "A" if r.index % 4 else "B"}) for r in rows]
    if name == "no_length_leak":
        for r in rows[:9]:
            options = list(r.options)
            options["ABCD".index(r.answer)] += " and a longer tail"
            _with(rows, r.index, options=options)
        return rows
    raise AssertionError(name)


@pytest.mark.parametrize("check", [c["id"] for c in checks_file()])
def test_each_defect_is_refused_by_its_expectation(check, tmp_path):
    result = gate(_defect(check), tmp_path)
    assert not result.success
    failed = {c.id.split("[")[0] for c in result.failures()}
    assert failed == {check}, result.message()
    message = result.message()
    assert message.startswith(check)
    failure = result.failures()[0]
    if failure.observed is None:  # a row check names its rows
        # the id given twice; a twin is named with its language
        named = {"unique_question_id": "q02", "twin_pairs": "q03@zh"}.get(check, "q03")
        assert named in failure.failing and named in message
    else:
        assert "allowed" in message
    assert (tmp_path / "docs" / "index.html").is_file()


def test_allow_unreviewed_skips_the_human_decision_check(tmp_path):
    result = gate(_defect("human_decision"), tmp_path, allow_unreviewed=True)
    assert result.success and result.skipped == ["human_decision"]


def test_a_question_that_names_its_options_gives_nothing_away(tmp_path):
    rows = _with(good_rows(), 3, question="Are there 3 limes or 3 plums?")
    assert gate(rows, tmp_path).success


def test_data_docs_escape_what_comes_from_the_data(tmp_path):
    rows = _with(good_rows(), 3, dimension="<script>alert(1)</script>", question_id="<b>q</b>")
    result = gate(rows, tmp_path)
    assert [c.id for c in result.failures()] == ["dimension_in_taxonomy"]
    assert result.failures()[0].failing == ["<b>q</b>"], "ids are reported as they are"
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "docs").rglob("*.html")]
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in page for page in pages)
    assert not any("<script>alert(1)" in page or "<b>q</b>" in page for page in pages)


@pytest.mark.parametrize("answer", ["", "AB", "a", "A "])
def test_an_answer_is_exactly_one_letter_of_the_options(answer, tmp_path):
    result = gate(_with(good_rows(), 3, answer=answer), tmp_path)
    assert [c.id for c in result.failures()] == ["answer_among_options"], result.message()
