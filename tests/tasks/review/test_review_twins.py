"""Twins in review: a translation is batched for the reviewers who read its language, decided
on as an item of its own (`<question_id>@zh`: accept, reject, an edit of its text; never its
key), counted per language in status and agreement, carried with its English item to Label
Studio and back, and decided on in the desk in Chromium."""

from __future__ import annotations

import json

import pytest

from benchfoundry.core.records import (
    CandidateRecord,
    ReviewBatchRecord,
    ReviewRecord,
    TranslationRecord,
)
from benchfoundry.decisions.reviews import Decision, record
from benchfoundry.decisions.status import review_status
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
from benchfoundry.tasks.review.stage import export_batches


def _twins(run: RunFolder, ids=("q0", "q1", "q2")) -> None:
    english = {c.question_id: c for c in run.table(CandidateRecord).records()}
    run.table(TranslationRecord).append(
        [
            TranslationRecord(
                question_id=q, language="zh", question=f"问题 {q} <b>是什么</b>？", hint=None,
                options=[f"选项{i}" for i in range(len(english[q].options))],
                answer=english[q].answer, method="template", checks=["option_count"],
            )
            for q in ids
        ]
    )  # fmt: skip


@pytest.fixture
def twin_run(run) -> RunFolder:
    """The review fixture's run (ann's batch of q0..q2) with a zh twin of each, batched again:
    ann reads English only, li and mei read Chinese."""
    _twins(run)
    options = ReviewOptions(
        reviewers=[
            Reviewer(name="ann", languages=["en"]),
            Reviewer(name="li", languages=["zh"]),
            Reviewer(name="mei", languages=["zh"]),
        ],
        cross_check=1.0,
    )
    summary = export_batches(str(run.root), options, "s")
    assert summary.twins == {"zh": 3}
    return run


def test_twins_are_batched_per_language_and_decided_as_items_of_their_own(twin_run, serve_app):
    run = twin_run
    batches = run.table(ReviewBatchRecord).records()
    zh = [b for b in batches if b.language == "zh"]
    # ann's English batch is as it was; every twin is in a zh batch of li's or mei's, and
    # cross-checked by the other of them (nobody who reads only English gets one)
    assert {b.reviewer for b in zh} == {"li", "mei"} and all(
        b.language is None for b in batches if b.reviewer == "ann"
    )
    assert sorted(q for b in zh for q in b.question_ids) == sorted(2 * ["q0@zh", "q1@zh", "q2@zh"])
    refused = record(
        run,
        [
            Decision("q1@zh", "li", "fix_answer", new_answer="A"),
            Decision("q1@zh", "li", "move", new_dimension="scene_understanding"),
            Decision("q1@zh", "li", "edit", new_options=["甲", "乙"]),
            Decision("q9@zh", "li", "accept"),
        ],
        "file",
    )[2]
    assert len(refused) == 4
    assert "keeps its English item's key and dimension" in refused[0] and "q1" in refused[0]
    assert "keeps its English item's 4 options" in refused[2]
    assert "no candidate with question id 'q9@zh'" in refused[3]
    added, _, refused = record(
        run,
        [
            Decision("q0@zh", "li", "accept"),
            Decision("q0@zh", "mei", "accept"),
            Decision("q1@zh", "li", "edit", new_question="图中的<b>字</b>是什么？"),
            Decision("q1@zh", "mei", "reject", reason="mistranslated"),
            Decision("q0", "ann", "accept"),
        ],
        "file",
    )
    assert (added, refused) == (5, [])
    stored = {(r.question_id, r.reviewer): r for r in ReviewStore.open(run).records()}
    assert stored[("q0@zh", "li")].language == "zh" and stored[("q0", "ann")].language is None
    state = review_status(run)
    zh_state = state.by_language["zh"]
    assert zh_state["states"] == {"agreed": 1, "conflict": 1, "undecided": 1}
    assert (zh_state["agreement"].items, zh_state["agreement"].agreement) == (2, 0.5)
    assert state.by_language["en"]["states"] == {"decided": 1, "undecided": 2}
    assert "q1@zh" in state.conflicts
    assert state.by_dimension == {}  # per dimension: the English items' agreement (none here)
    assert {b["language"] for b in state.batches} == {None, "zh"}
    from benchfoundry.decisions.status import status_markdown

    assert "| zh | agreed 1, conflict 1, undecided 1 | 2 | 0.500 |" in status_markdown(state)
    # The run folder's `reviews` table (the snapshot) carries the language.
    ReviewStore.open(run).snapshot()
    languages = {(r.question_id, r.language) for r in run.table(ReviewRecord).records()}
    assert ("q1@zh", "zh") in languages and ("q0", None) in languages
    # The adjudicator's queue shows the twin in conflict beside its English item, and offers
    # only the decisions a twin takes.
    import urllib.request

    from benchfoundry.tasks.review.app import create_app
    from tests.tasks.review.conftest import token_of

    url = serve_app(create_app(run.root))
    headers = {"Authorization": f"Bearer {token_of('lead')}"}
    request = urllib.request.Request(f"{url}/api/conflicts", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        (conflict,) = json.loads(response.read())["conflicts"]
    assert (conflict["question_id"], conflict["language"]) == ("q1@zh", "zh")
    assert conflict["english"]["question_id"] == "q1"
    with urllib.request.urlopen(urllib.request.Request(f"{url}/conflicts", headers=headers)) as r:
        page = r.read().decode()
    form = page[page.index('data-question="q1@zh"') :]
    form = form[: form.index("</form>")]
    assert "<option>edit</option>" in form and "fix_answer" not in form and "move" not in form
    assert "问题 q1 &lt;b&gt;是什么&lt;/b&gt;？" in page and "<b>是什么</b>" not in page


def _released(run: RunFolder):
    """What publish would release of the run as decided now: (selection, twins, left out)."""
    from benchfoundry.tasks.publish.rows import twin_rows
    from benchfoundry.tasks.publish.stage import _selection

    ReviewStore.open(run).snapshot()
    selection = _selection(run, "seed_bench", include_auto=False)
    twins, left = twin_rows(
        selection.rows,
        run.table(TranslationRecord).records(),
        {c.question_id: c for c in run.table(CandidateRecord).records()},
        run.table(ReviewRecord).records(),
        include_auto=False,
    )
    return selection, twins, left


def test_a_twin_is_released_as_its_own_review_decided(twin_run):
    run = twin_run
    record(
        run,
        [Decision(q, "ann", "accept") for q in ("q0", "q1", "q2")]
        + [
            Decision("q0@zh", "li", "edit", new_question="改过的问题？"),
            Decision("q1@zh", "li", "reject", reason="mistranslated"),
            Decision("q2@zh", "li", "accept"),
            Decision("q2@zh", "mei", "reject", reason="wrong word"),
        ],
        "file",
    )
    selection, twins, left = _released(run)
    assert [r.question_id for r in selection.rows] == ["q0", "q1", "q2"]
    (edited,) = twins
    assert (edited.question_id, edited.language, edited.question) == ("q0", "zh", "改过的问题？")
    assert edited.review_state == "decided" and edited.reviewers == ["li"] and edited.human_reviewed
    assert edited.review_changes == ["question"] and edited.answer == selection.rows[0].answer
    assert left == {
        "zh: twin rejected": 1,
        "zh: twin reviewers disagree (not adjudicated)": 1,
    }


def test_label_studio_carries_the_twin_and_its_english_item_and_reads_decisions_back(
    twin_run, tmp_path
):
    from benchfoundry.tasks.review.labelstudio import decisions_from_export
    from tests.tasks.review.conftest import labelstudio_export

    run = twin_run
    batch = next(b for b in run.table(ReviewBatchRecord).records() if b.reviewer == "li")
    to = tmp_path / "ls" / "tasks.json"
    tasks = labelstudio_export(run, batch.batch_id, to)
    english = {c.question_id: c for c in run.table(CandidateRecord).records()}
    for task in tasks:
        data = task["data"]
        base = data["question_id"].split("@")[0]
        assert data["language"] == "zh" and data["english_question_id"] == base
        assert data["english_question"] == english[base].question
        assert data["question"] == f"问题 {base} <b>是什么</b>？"
    config = (to.parent / "label_config_zh.xml").read_text(encoding="utf-8")
    assert not (to.parent / "label_config.xml").exists()  # an English batch's stays as it is
    assert "$english_question" in config and '"fix_answer"' not in config
    assert 'name="dimension"' not in config
    exported = [
        {
            "data": task["data"],
            "annotations": [
                {
                    "completed_by": 7,
                    "result": [
                        {"from_name": "decision", "value": {"choices": ["accept"]}},
                    ],
                    "updated_at": f"2026-12-05T01:00:0{i}.000000Z",
                }
            ],
        }
        for i, task in enumerate(tasks)
    ]
    decisions = decisions_from_export(exported, {"7": "li"})
    added, _, refused = record(run, decisions, "labelstudio")
    assert (added, refused) == (len(tasks), [])
    stored = [r for r in ReviewStore.open(run).records() if r.tool == "labelstudio"]
    assert {r.language for r in stored} == {"zh"} and {r.reviewer for r in stored} == {"li"}


def test_the_alembic_upgrade_keeps_decisions_made_before_twins(tmp_path):
    """A review database at the first schema is upgraded in place when a store opens: the
    decisions are kept, on English items (no language)."""
    import sqlalchemy as sa
    from alembic import command

    from benchfoundry.decisions import database

    run = RunFolder(tmp_path / "run")
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    engine = sa.create_engine(url)
    config = database.alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(
            sa.text(
                "INSERT INTO reviews (question_id, reviewer, decision, tool, candidate_hash, "
                "decided_at, adjudication) VALUES ('q0', 'ann', 'accept', 'web', 'h', "
                "'2026-12-01T00:00:00.000000000Z', 0)"
            )
        )
    engine.dispose()
    store = ReviewStore.open(run, url)
    (old,) = store.records()
    assert (old.question_id, old.reviewer, old.language) == ("q0", "ann", None)
    with store.engine.connect() as connection:
        version = connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        columns = {c["name"] for c in sa.inspect(connection).get_columns("reviews")}
    assert version == "0002" and "language" in columns


@pytest.mark.browser
def test_a_reviewer_decides_twins_in_the_desk_beside_their_english_items(twin_run, prefect_api):
    from playwright.sync_api import expect, sync_playwright

    from tests.tasks.review.test_app_browser import _serve, chromium, console_errors

    run = twin_run
    token = "li-browser-token-0123456789abcdef"
    ReviewStore.open(run).add_user("li", "annotator", token=token)
    url, server = _serve(run)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page()
            errors = console_errors(page)
            page.goto(f"{url}/?token={token}")
            page.locator("table.batches tr", has_text="zh twins").locator("a").first.click()
            page.wait_for_load_state("load")
            first = page.locator(".sample").first
            qid = first.get_attribute("data-question")
            assert qid.endswith("@zh") and first.get_attribute("data-twin") == "zh"
            english = {c.question_id: c for c in run.table(CandidateRecord).records()}
            base = qid.split("@")[0]
            # the twin's text as text (markup escaped), its English item beside it
            expect(first.locator(".item .question")).to_have_text(f"问题 {base} <b>是什么</b>？")
            expect(first.locator(".english .question")).to_have_text(english[base].question)
            page.keyboard.press("f")  # the key is the English item's: refused in the page
            expect(first.locator(".message")).to_contain_text("keeps its English item's key")
            page.keyboard.press("a")
            expect(first.locator(".current")).to_have_text("decided: accept")
            page.keyboard.press("j")
            second = page.locator(".sample").nth(1)
            page.keyboard.press("e")
            second.locator("form.edit textarea").fill("改过的问题？")
            page.keyboard.press("Control+Enter")
            expect(second.locator(".current")).to_have_text("decided: edit")
            assert errors == []
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    decided = {r.question_id: r for r in ReviewStore.open(run).records() if r.reviewer == "li"}
    assert decided[qid].decision == "accept" and decided[qid].language == "zh"
    (edited,) = (r for q, r in decided.items() if q != qid)
    assert edited.decision == "edit" and edited.new_question == "改过的问题？"
    assert edited.tool == "web" and edited.role == "annotator"


def test_twins_follow_their_english_items_and_their_own_content(twin_run):
    """A twin translated again after a person decided it is left out (decided on content that
    changed since); an English item whose key was fixed leaves its twin out (and its twin,
    written before the fix, is not accepted), one moved to another dimension keeps it; exporting again adds no batch; suspects bring their twins."""
    run = twin_run
    key = {c.question_id: c.answer for c in run.table(CandidateRecord).records()}["q1"]
    added, _, refused = record(
        run,
        [
            Decision("q0", "ann", "accept"),
            Decision("q1", "ann", "fix_answer", new_answer="B" if key == "A" else "A"),
            Decision("q2", "ann", "move", new_dimension="scene_understanding"),
        ]
        + [Decision(f"q{i}@zh", "li", "accept") for i in range(3)],
        "file",
    )
    # q1's twin was written before ann fixed q1's key: li's accept of it is refused, and says why
    assert (added, refused) == (
        5,
        [
            "q1@zh (li): the English item q1 changed in review after this twin was written "
            "(ann changed its key): the twin cannot be accepted; write it again from the English "
            "item as it is now (edit its text), or reject it"
        ],
    )
    # written again, it takes q1's new key (and not the old one)
    new_key = "B" if key == "A" else "A"
    rewrite = Decision("q1@zh", "li", "edit", new_question="重写的问题？", new_answer=key)
    assert record(run, [rewrite], "file")[2] == [
        f"q1@zh (li): a twin keeps its English item's key {new_key}"
    ]
    rewrite = Decision("q1@zh", "li", "edit", new_question="重写的问题？", new_answer=new_key)
    assert record(run, [rewrite], "file")[:2] == (1, 0)
    # q0's twin is translated again after li accepted it
    twins = run.table(TranslationRecord)
    (q0,) = (t for t in twins.records() if t.question_id == "q0")
    twins.rewrite([q0.model_copy(update={"question": "新的译文？"})])
    _, released, left = _released(run)
    # moved: its twin stays; q1's twin, written again after its key was fixed, is released
    assert [r.question_id for r in released] == ["q1", "q2"]
    q1 = next(r for r in released if r.question_id == "q1")
    assert (q1.question, q1.answer, q1.review_decision) == ("重写的问题？", new_key, "edit")
    assert left == {"zh: twin decided on content that has changed since": 1}
    # Exporting again adds nothing; a suspects export brings back the suspects' twins only.
    options = ReviewOptions(
        reviewers=[Reviewer(name="ann", languages=["en"]), Reviewer(name="li", languages=["zh"])],
        cross_check=0.0,
    )
    before = len(run.table(ReviewBatchRecord).records())
    assert export_batches(str(run.root), options, "s").batches_added == 0
    assert len(run.table(ReviewBatchRecord).records()) == before
    import pyarrow as pa
    import pyarrow.parquet as pq

    suspects = run.root / "items.parquet"
    pq.write_table(
        pa.table({"question_id": ["q1"], "suspect": [True], "why": ["low discrimination"]}),
        suspects,
    )
    sent = export_batches(
        str(run.root), options.model_copy(update={"suspects": str(suspects)}), "s"
    )
    assert sent.twins == {"zh": 1} and set(sent.suspects) == {"q1"}
    new = run.table(ReviewBatchRecord).records()[before:]
    assert sorted(q for b in new for q in b.question_ids) == ["q1", "q1@zh"]


def test_a_translation_suspect_goes_back_as_its_twin_alone(twin_run, tmp_path):
    """The item analysis per language found q0's twin suspect while q0 is fine (a translation
    suspect: its review item is the twin) and q1 suspect in both languages (a key suspect: the
    English item, which brings its twin): q0@zh is batched with its own why, q0 is not."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchfoundry.tasks.evaluate.items import SCHEMA

    rows = [
        {"question_id": q, "language": language, "suspect": item is not None,
         "suspect_kind": kind, "review_item": item, "why": why}
        for q, language, kind, item, why in [
            ("q0", "en", None, None, None),
            ("q0@zh:1a2b3c4d", "zh", "translation", "q0@zh",
             "translation suspect: its English item q0 is fine; the Chinese text may mislead"),
            ("q1", "en", "key", "q1", "discrimination -0.80 ± 0.40: able respondents fail it"),
            ("q1@zh:5e6f7a8b", "zh", "key", "q1", "key suspect with its English item q1"),
        ]
    ]  # fmt: skip
    items = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), items)
    run = twin_run
    before = len(run.table(ReviewBatchRecord).records())
    options = ReviewOptions(
        reviewers=[Reviewer(name="ann", languages=["en"]), Reviewer(name="li", languages=["zh"])],
        cross_check=0.0,
        suspects=str(items),
    )
    sent = export_batches(str(run.root), options, "s")
    new = run.table(ReviewBatchRecord).records()[before:]
    assert sorted(q for b in new for q in b.question_ids) == ["q0@zh", "q1", "q1@zh"]
    assert {b.reviewer for b in new if "q0@zh" in b.question_ids} == {"li"}
    assert sent.twins == {"zh": 2} and sent.suspects_unknown == []
    assert sent.suspects["q0@zh"].startswith("translation suspect: its English item q0 is fine")
    assert sent.suspects["q1"].startswith("discrimination -0.80")
    assert "suspect q0@zh: translation suspect" in sent.markdown()


def test_the_store_knows_alembics_newest_revision(tmp_path):
    """`database.HEAD`, which spares a store at the newest schema alembic's import, is the head
    of the migrations alembic finds; a database at it is left alone, one at an older revision
    or without one is not taken to be there."""
    import sqlalchemy as sa
    from alembic.script import ScriptDirectory

    from benchfoundry.decisions import database

    assert ScriptDirectory.from_config(database.alembic_config()).get_heads() == [database.HEAD]
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'new.sqlite'}")
    assert not database.at_head(engine)  # no alembic_version table yet
    database.migrate(engine)
    assert database.at_head(engine)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '0001'"))
    assert not database.at_head(engine)
