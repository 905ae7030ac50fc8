"""The item explorer in a real Chromium, through the files `publish` and `evaluate` write: a
bilingual release of 8 items (one whose text holds HTML, one with evidence, one whose key a
reviewer annotated) evaluated under CircularEval by three scripted models behind the test
server. The filters return the items the script makes right or wrong;
an item page shows its Chinese twin (as characters), every model's reply per pass, the key's
evidence over the image and the review history; no API key reaches the files; `benchfoundry
explore` writes both kinds elsewhere. (A clip question's page: tests/tasks/publish/
test_publish_clips.py, on that module's release.)"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image

from benchfoundry.core.ids import image_id
from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    ReviewRecord,
    ScoredRecord,
    TranslationRecord,
)
from benchfoundry.decisions.reviews import AUTO, Decision, candidate_hash, now, record
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.twins import twin_candidate, twin_review_id
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.publish.options import PublishOptions
from tests.tasks.review.test_app_browser import chromium

pytestmark = pytest.mark.browser
SECRET = "sk-explorer-secret-5b1d0c"
HTML = 'What is <b>shown</b>? <img src=x onerror="window.__xss=1">'
EVIDENCE = "instance red block at [10, 20, 60, 70]"
DIMENSIONS = ("instance_attributes", "scene_understanding")
EN = ["red-{i}", "blue-{i}", "teal-{i}", "grey-{i}"]
ZH = ["红色{i}", "蓝色{i}", "青色{i}", "灰色{i}"]
SHOWN = re.compile(r"^([A-J])\. (.+?)\s*$", re.M)


def _image(seed: int) -> bytes:
    image = Image.new("RGB", (160, 120), (200, 200, 200))
    image.paste((220, 30 + 20 * seed, 40), (10, 20, 60, 70))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _key(i: int) -> int:
    return i % 4


def _reply(model: str, text: str) -> str:
    """good: the key's option, except q05 (both languages), q06 in Chinese and q07; bad: A,
    except on q07, where it names the key; mute: nothing one can read."""
    shown = dict((t, letter) for letter, t in SHOWN.findall(text))
    (i,) = {int(re.search(r"(\d+)$", t).group(1)) for t in shown}
    chinese = any("\u4e00" <= c <= "\u9fff" for c in "".join(shown))
    options = [o.format(i=i) for o in (ZH if chinese else EN)]
    right, wrong = shown[options[_key(i)]], shown[options[(_key(i) + 1) % 4]]
    if model == "mute":
        return "I cannot tell."
    if model == "bad":
        return f"The answer is {right}." if i == 7 else "A"
    return wrong if i in (5, 7) or (i == 6 and chinese) else f"The answer is {right}."


def _run(root: Path) -> RunFolder:
    run = RunFolder(root / "run")
    images = []
    for seed in range(4):
        data = _image(seed)
        images.append(image_id(data))
        run.table(ImageRecord).append(
            [ImageRecord(
                image_id=images[-1], source=f"pictures/{seed}.png", source_kind="folder",
                width=160, height=120, format="PNG", mode="RGB", n_bytes=len(data),
                phash="0" * 16, duplicate_of=None, duplicate_distance=None, license=None,
                meta={}, bytes=data,
            )]
        )  # fmt: skip
    candidates = [
        CandidateRecord(
            question_id=f"q{i:02d}", image_id=images[i // 2], dimension=DIMENSIONS[i % 2],
            question=HTML if i == 3 else f"Which colour is the block in picture {i}?",
            hint=None, options=[o.format(i=i) for o in EN], answer="ABCD"[_key(i)],
            category=None, l2_category=None, split=None, generator="test", prompt_id=None,
            prompt_hash=None, evidence=[EVIDENCE] if i == 1 else [], source="test", meta={},
            raw_output=None,
        )
        for i in range(8)
    ]  # fmt: skip
    run.table(CandidateRecord).append(candidates)
    run.table(ScoredRecord).append(
        [
            ScoredRecord(
                question_id=c.question_id, image_id=c.image_id, dimension=c.dimension,
                answer=c.answer, hits_text=0, hits_text_circular=None, n_text_models=1,
                text_hit_by=[], hits_vlm=0, hits_vlm_circular=None, n_vlm_models=1,
                vlm_hit_by=[], flags=[], difficulty=("tough", "easy")[int(c.question_id[1:]) % 2],
                decision="selected", reason="test", rank=None,
            )
            for c in candidates
        ]
    )  # fmt: skip
    decisions = [
        Decision(c.question_id, "ann", "accept") for c in candidates if c.question_id != "q02"
    ]
    decisions.append(Decision("q02", "ann", "accept", note="the teal one, not the grey"))
    added, _, refused = record(run, decisions, tool="app")
    assert added == 8 and not refused
    twins = [
        TranslationRecord(
            question_id=c.question_id, language="zh", question=f"图{i}中的方块是什么颜色？",
            hint=None, options=[o.format(i=i) for o in ZH], answer=c.answer, method="template",
            checks=["option_count"],
        )
        for i, c in enumerate(candidates)
    ]  # fmt: skip
    run.table(TranslationRecord).append(twins)
    fixed = {c.question_id: c for c in candidates}
    ReviewStore.open(run).add(
        [
            ReviewRecord(
                question_id=twin_review_id(t.question_id, "zh"), reviewer=AUTO, decision="accept",
                tool="auto", language="zh", decided_at=now(),
                candidate_hash=candidate_hash(twin_candidate(fixed[t.question_id], t)),
            )
            for t in twins
        ]
    )  # fmt: skip
    return run


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    """A bilingual release published and evaluated; a release of clip questions published."""
    root = tmp_path_factory.mktemp("explorer")
    run = _run(root)
    options = PublishOptions(
        to=root / "releases", allow_unreviewed=True, letter_tolerance=1, longest_answer_share=1
    )
    stage = StageRun.make(run, publish=options)
    stage.name = "bench"
    summary = STAGES["publish"].run(stage)
    release = Path(summary.release)
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET
    try:
        rules = [Rule(lambda r, m=m: _reply(m, r.text), model=m) for m in ("good", "bad", "mute")]
        with TestServer(Script(rules=rules), api_key=SECRET) as server:
            models = [f"openai/{m}@{server.base_url}" for m in ("good", "bad", "mute")]
            evaluation = EvaluateOptions(dataset=release, models=models, mode="circular")
            STAGES["evaluate"].run(StageRun.make(root / "eval", evaluate=evaluation))
    finally:
        if before is None:
            os.environ.pop("OPENAI_API_KEY")
        else:
            os.environ["OPENAI_API_KEY"] = before
    return {
        "root": root,
        "release": release,
        "evaluation": root / "eval" / "reports" / "evaluation",
    }


@pytest.fixture(scope="module")
def page(written):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.errors = errors
        yield page
        browser.close()


def _open(page, folder: Path, route: str = "") -> None:
    page.goto((folder / "explore" / "index.html").as_uri() + route)
    page.wait_for_selector("body[data-ready]")


def _shown(page) -> list[str]:
    """Every row the table's filters let through (all pages)."""
    return page.evaluate("() => window.BFEXPLORER.shown.map(r => r.id)")


def _filter(page, name: str, value) -> None:
    if isinstance(value, bool):
        page.set_checked(f"#f-{name}", value)
    else:
        page.select_option(f"#f-{name}", str(value))


def _twin(qid: str) -> str:
    return f"{qid}@zh"


def test_the_filters_return_the_items_the_models_got_right_and_wrong(written, page):
    _open(page, written["evaluation"])
    assert len(_shown(page)) == 16  # 8 items, each in English and Chinese
    models = page.evaluate("() => window.BFEXPLORER.meta.models.map(m => m.model)")
    good = next(i for i, m in enumerate(models) if m.startswith("openai/good"))
    _filter(page, "allWrong", True)
    assert set(_shown(page)) == {"q05", _twin("q05"), _twin("q06")}
    page.reload()  # the view is in the address: a reload (or a bookmark) shows it again
    page.wait_for_selector("body[data-ready=table]")
    assert set(_shown(page)) == {"q05", _twin("q05"), _twin("q06")}
    assert page.is_checked("#f-allWrong")
    _filter(page, "allWrong", False)
    _filter(page, "model", good)
    _filter(page, "outcome", "W")
    assert set(_shown(page)) == {"q05", _twin("q05"), _twin("q06"), "q07", _twin("q07")}
    _filter(page, "lang", "en")
    assert set(_shown(page)) == {"q05", "q07"}
    _filter(page, "outcome", "")
    _filter(page, "model", "")
    scene = page.evaluate(
        "d => window.BFEXPLORER.meta.dimensions.find(x => x.endsWith(d))", DIMENSIONS[1]
    )
    _filter(page, "dim", scene)
    assert set(_shown(page)) == {"q01", "q03", "q05", "q07"}
    _filter(page, "dim", "")
    _filter(page, "lang", "")
    _filter(page, "disagree", True)  # some right, some not: every item good or bad gets right
    expected = {f"q{i:02d}" for i in (0, 1, 2, 3, 4, 6, 7)} | {
        _twin(f"q{i:02d}") for i in (0, 1, 2, 3, 4, 7)
    }
    assert set(_shown(page)) == expected
    _filter(page, "disagree", False)
    page.fill("#f-text", "灰色4")  # an option of q04's twin
    assert _shown(page) == [_twin("q04")]
    page.fill("#f-text", "")
    # the suspect filter shows the item analysis's suspects (items.parquet), no more, no fewer
    items = pq.read_table(written["evaluation"] / "items.parquet").to_pylist()
    suspects = {
        r["question_id"].split("@")[0] + ("" if r["language"] == "en" else "@" + r["language"])
        for r in items
        if r["suspect"]
    }
    _filter(page, "suspect", True)
    assert set(_shown(page)) == suspects
    _filter(page, "suspect", False)
    assert page.errors == []


def test_an_item_page_shows_its_twin_every_pass_and_the_key_s_evidence(written, page):
    _open(page, written["evaluation"], "#/item/q01/en")
    texts = page.locator("#texts")
    assert texts.locator("[data-language=zh] .question").inner_text() == "图1中的方块是什么颜色？"
    assert texts.locator("[data-language=en] .question").inner_text() == (
        "Which colour is the block in picture 1?"
    )
    # the Chinese is drawn as characters: its glyphs differ from a character no font has
    drawn = page.evaluate(
        """() => { const draw = t => { const c = document.createElement('canvas');
            c.width = 80; c.height = 40; const x = c.getContext('2d');
            x.font = getComputedStyle(document.body).fontSize + ' ' + getComputedStyle(document.body).fontFamily;
            x.fillText(t, 2, 30); return c.toDataURL(); };
          return [draw('方块'), draw('\\u{E000}\\u{E001}')]; }"""
    )
    assert drawn[0] != drawn[1]
    models = page.evaluate("() => window.BFEXPLORER.meta.models.map(m => m.model)")
    rows = page.locator("#answers tr[data-model]")
    replies: dict[tuple[str, str], list[str]] = {}
    for n in range(rows.count()):
        row = rows.nth(n)
        model = models[int(row.get_attribute("data-model"))].split("@")[0].split("/")[1]
        key = (model, row.get_attribute("data-language"))
        replies.setdefault(key, []).append(row.locator(".reply").inner_text())
    # good: right on all four rotations in both languages, each reply read as option B, the
    # key; bad ("A") stops at its first pass (q01's key is B), mute at its first (unreadable)
    assert len(replies[("good", "en")]) == len(replies[("good", "zh")]) == 4
    assert all(r.startswith("The answer is ") for r in replies[("good", "en")])
    read = page.locator("#answers tr[data-language=en] td:nth-child(6)").all_inner_texts()
    assert sum(x in ("B", "B = option B") or x.endswith("= option B") for x in read) == 4
    assert replies[("bad", "en")] == ["A"] and replies[("mute", "zh")] == ["I cannot tell."]
    assert page.locator("#evidence li").all_inner_texts() == [EVIDENCE]
    rect = page.locator("#evidence-overlay rect")
    assert [rect.get_attribute(a) for a in ("x", "y", "width", "height")] == [
        "10",
        "20",
        "50",
        "50",
    ]
    _open(page, written["evaluation"], "#/item/q02/en")
    history = page.locator("#reviews").inner_text()
    assert "the teal one, not the grey" in history and "ann" in history and "auto" in history
    assert page.locator("#texts li.key").first.inner_text().startswith("C.")


def test_text_holding_html_shows_as_text(written, page):
    _open(page, written["release"])
    page.fill("#f-text", "shown")
    assert _shown(page) == ["q03"]
    assert page.locator("#rows td.q").inner_text() == HTML
    _open(page, written["release"], "#/item/q03/en")
    assert page.locator("#texts [data-language=en] .question").inner_text() == HTML
    assert page.locator("#texts img, #texts b").count() == 0
    assert page.evaluate("() => window.__xss") is None
    assert page.errors == []


def test_a_model_page_lists_the_discordant_pairs(written, page):
    _open(page, written["evaluation"])
    models = page.evaluate("() => window.BFEXPLORER.meta.models.map(m => m.model)")
    good = next(i for i, m in enumerate(models) if m.startswith("openai/good"))
    bad = next(i for i, m in enumerate(models) if m.startswith("openai/bad"))
    _open(page, written["evaluation"], f"#/model/{good}/en/vs/{bad}")  # English, its own board
    only_good = [t.split(" ")[0] for t in page.locator("#only-this li").all_inner_texts()]
    assert set(only_good) == {f"q{i:02d}" for i in (0, 1, 2, 3, 4, 6)}
    # b = 6, c = 1: two-sided exact binomial p = 2 * (1 + 7) / 2**7
    assert "exact McNemar p = 0.125 " in page.locator("#mcnemar").inner_text()
    _open(page, written["evaluation"], f"#/model/{good}/all/vs/{bad}")  # pooled, when asked
    only_good = [t.split(" ")[0] for t in page.locator("#only-this li").all_inner_texts()]
    only_bad = [t.split(" ")[0] for t in page.locator("#only-other li").all_inner_texts()]
    assert set(only_good) == {f"q{i:02d}" for i in (0, 1, 2, 3, 4, 6)} | {
        _twin(f"q{i:02d}") for i in (0, 1, 2, 3, 4)
    }
    assert set(only_bad) == {"q07", _twin("q07")}
    errors = [t.split(" ")[0] for t in page.locator("#errors li").all_inner_texts()]
    assert set(errors) == {"q05", _twin("q05"), _twin("q06"), "q07", _twin("q07")}
    assert errors[:2] == ["q07", _twin("q07")]  # the one another model gets right first


def test_the_report_links_the_explorer_and_no_key_reaches_the_files(written):
    report = (written["evaluation"] / "report.html").read_text(encoding="utf-8")
    assert "href='explore/index.html'" in report
    for folder in (written["evaluation"] / "explore", written["release"] / "explore"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path


def test_the_explore_command_writes_either_kind_elsewhere(written, tmp_path):
    from typer.testing import CliRunner

    from benchfoundry.cli import app
    from benchfoundry.explorer.site import read_chunk

    cli = CliRunner()
    refused = cli.invoke(app, ["explore", str(written["release"])])
    assert refused.exit_code == 1 and "never changes: give --to" in refused.output
    done = cli.invoke(
        app,
        ["explore", str(written["release"]), "--to", str(tmp_path / "alone"), "--json"],
    )
    assert done.exit_code == 0, done.output
    (item,) = [
        i for i in read_chunk(tmp_path / "alone" / "data" / "items-000.js") if i["qid"] == "q01"
    ]
    assert item["evidence"] == [] and item["texts"]["zh"]["question"] == "图1中的方块是什么颜色？"
    done = cli.invoke(app, ["explore", str(written["root"] / "eval"), "--to", str(tmp_path / "ev")])
    assert done.exit_code == 0, done.output
    (item,) = [
        i for i in read_chunk(tmp_path / "ev" / "data" / "items-000.js") if i["qid"] == "q01"
    ]
    assert item["evidence"] == [EVIDENCE]  # from the release's own explorer
    assert len(item["answers"]["zh"]) == 3  # three models answered the twin
