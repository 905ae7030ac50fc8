"""What the desk says about an item, in Chromium against `benchfoundry review serve`: a flat
taxonomy's dimension once in the path, a move offered only to dimensions of the item's own
medium, a Chinese twin's model answers as whose they are (its own, or its English item's said
so), and the twin's text drawn with CJK glyphs, not empty boxes. (A clip question's source line
is in `test_app_browser.py`, with the clip.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchfoundry.core.records import (
    CandidateRecord,
    JudgementRecord,
    ScoredRecord,
    TranslationRecord,
)
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder
from tests.tasks.review.test_app_browser import _serve, chromium, console_errors

pytestmark = pytest.mark.browser
ANN, LI = "ann-desk-token-0123456789abcdef", "li-desk-token-0123456789abcdef"
TWIN_TEXT = "图中<b>哪个</b>物体是红色的？"  # seven Han characters, markup kept as text


def _judgement(question_id: str, model: str, options: list[str], letter: str) -> JudgementRecord:
    return JudgementRecord(
        question_id=question_id, model=model, mode="vlm", with_image=True, pass_index=0,
        option_order=options, prompt="p", raw_response=letter, extracted=letter,
        extracted_by="heuristic", correct=letter == "A", error=None,
    )  # fmt: skip


# The image's files as ingest named them: the first origin, and a second copy of the same bytes.
PHOTO, COPY = "/data/curator/phone/IMG_2024.jpg", "/data/curator/backup/IMG_2024 <copy>.jpg"
# The objects q1 counts ("How many objects ...", the count template's own question and evidence),
# and a grey region beside them that both readings did not agree on, so it is not counted.
COUNTED = [([4.0, 4.0, 14.0, 14.0], "red"), ([20.0, 4.0, 30.0, 14.0], "grey"),
           ([36.0, 4.0, 46.0, 14.0], "grey"), ([4.0, 30.0, 14.0, 40.0], "blue")]  # fmt: skip
UNCOUNTED = ([40.0, 30.0, 50.0, 40.0], "grey")


def _instance(box: list[float], colour: str):
    from benchfoundry.core.records import Instance

    return Instance(box=box, mask_area=100, label=None, attributes=[colour, "round", "middle"],
                    dense_caption=None, score=1.0)  # fmt: skip


@pytest.fixture
def twin_desk(module_servers, tmp_path_factory, image_bytes, store_raw_image, candidate_record,
              scored_record):  # fmt: skip
    """Two image questions in SEED-Bench's flat `instance_attributes` (its category is the
    dimension itself), each answered by an English model; a zh twin of each, the second also
    answered in Chinese by a model of its own; ann reviews the English items, li the twins.
    The image came from two files; q1 is the count template's "how many objects" question on
    the image's facts. One run and server for the module's tests: the glyph test reads q1's
    twin, which the other leaves as it was."""
    if "twin_desk" not in module_servers:
        module_servers["twin_desk"] = _twin_desk(
            tmp_path_factory.mktemp("twin-desk"), image_bytes, store_raw_image, candidate_record,
            scored_record,
        )  # fmt: skip
    run, url, _ = module_servers["twin_desk"]
    return run, url


def _twin_desk(tmp, image_bytes, store_raw_image, candidate_record, scored_record) -> tuple:
    from benchfoundry.core.records import ImageSourceRecord, VisualFactsRecord
    from benchfoundry.tasks.generate.templates import count_questions
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
    from benchfoundry.tasks.review.stage import export_batches

    run = RunFolder(tmp / "run")
    image = store_raw_image(run, image_bytes((64, 48)), source=PHOTO, size=(64, 48))
    run.table(ImageSourceRecord).append(
        [
            ImageSourceRecord(image_id=image, source=path, source_kind="folder", license=None,
                              meta={})
            for path in (PHOTO, COPY)
        ]
    )  # fmt: skip
    facts = VisualFactsRecord(
        image_id=image, config_hash="c", captions=[], ocr_lines=[], extractors=[],
        instances=[_instance(box, colour) for box, colour in [*COUNTED, UNCOUNTED]],
    )  # fmt: skip
    run.table(VisualFactsRecord).append([facts])
    count = count_questions(facts, [_instance(box, colour) for box, colour in COUNTED])
    english = [
        candidate_record(q, image, dimension="instance_attributes", category="instance_attributes")
        for q in ("q0", "q1")
    ]
    english[1] = english[1].model_copy(update={"evidence": count.questions[0].evidence})
    run.table(CandidateRecord).append(english)
    run.table(ScoredRecord).append(
        [scored_record(c.question_id, image, dimension=c.dimension, hits_vlm=1) for c in english]
    )
    zh_options = ["红色的球", "蓝色的盒子", "绿色的叶子", "黄色的车"]
    run.table(TranslationRecord).append(
        [
            TranslationRecord(
                question_id=c.question_id, language="zh", question=TWIN_TEXT, hint=None,
                options=zh_options, answer=c.answer, method="llm:translator", checks=[],
            )
            for c in english
        ]
    )  # fmt: skip
    run.table(JudgementRecord).append(
        [_judgement(c.question_id, "english-vlm", c.options, "A") for c in english]
        + [_judgement("q1@zh", "chinese-vlm", zh_options, "B")]
    )
    reviewers = [Reviewer(name="ann", languages=["en"]), Reviewer(name="li", languages=["zh"])]
    export_batches(str(run.root), ReviewOptions(reviewers=reviewers, cross_check=0.0), "s")
    store = ReviewStore.open(run)
    store.add_user("ann", "annotator", token=ANN)
    store.add_user("li", "annotator", token=LI)
    return (run, *_serve(run))


def _cjk_families() -> set[str]:
    """The font families fontconfig has for Chinese; skipped where there is none (an error
    under CI=true): Chromium would draw every twin as empty boxes."""
    found = set()
    if shutil.which("fc-list"):
        listed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True)
        found = {f.strip() for line in listed.stdout.splitlines() for f in line.split(",")}
    if not found - {""}:
        reason = "no CJK font (scripts/setup.sh installs Debian's 'fonts-noto-cjk' as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found - {""}


# A fontconfig that hides every font for Chinese: Chromium on a machine without a CJK font.
NO_CJK_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont>
    <pattern><patelt name="lang"><string>zh-cn</string></patelt></pattern>
  </rejectfont></selectfont>
</fontconfig>
"""


def _drawn(page, selector: str) -> tuple[list[str], bool]:
    """(the platform fonts Chromium drew the element's text with, whether its Chinese
    characters are drawn as glyphs: their pixels differ from the same number of its first
    character. A missing font draws each as the same empty box, and the two are equal.)"""
    cdp = page.context.new_cdp_session(page)
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    cdp.send("CSS.enable")
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    element = page.locator(selector)
    han = element.evaluate(
        "e => { e.dataset.text = e.textContent; const han = e.textContent.match(/\\p{Script=Han}/gu);"
        " e.textContent = han.join(''); return han; }"
    )
    assert len(set(han)) > 1, han
    shown = element.screenshot()
    element.evaluate("(e, n) => { e.textContent = e.textContent[0].repeat(n); }", len(han))
    same = element.screenshot()
    element.evaluate("e => { e.textContent = e.dataset.text; }")
    return [f["familyName"] for f in fonts], shown != same


def _twin_page(browser, url: str):
    """li's batch of zh twins in a new page (a context of its own), and its console errors."""
    page = browser.new_page()
    errors = console_errors(page)
    page.goto(f"{url}/?token={LI}")
    page.locator("table.batches tr", has_text="zh twins").locator("a").first.click()
    page.wait_for_load_state("load")
    return page, errors


def test_the_desk_says_whose_answers_a_twin_shows_and_offers_moves_of_its_medium(twin_desk):
    """ann's English item: its path once, moves to image dimensions only, its source's files,
    a count's every counted object drawn, her edit's text shown; li's twins: q0's shows its
    English item's answers and says so, q1's its own answers only; q0's twin, written before
    ann's edit, is not accepted and is written again."""
    from playwright.sync_api import expect, sync_playwright

    from benchfoundry.decisions.reviews import media_dimensions

    run, url = twin_desk
    media = media_dimensions(run)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page()
        errors = console_errors(page)
        page.goto(f"{url}/?token={ANN}")
        page.locator("table.batches a").first.click()
        page.wait_for_load_state("load")
        first = page.locator('[data-question="q0"]')
        # the flat taxonomy's dimension once, not "instance_attributes / instance_attributes"
        expect(first.locator(".path")).to_have_text(re.compile(r"^[12] of 2 instance_attributes$"))
        # an image's question moves only to an image's dimension
        offered = first.locator("form.move option").all_inner_texts()
        assert set(offered) == set(media["image"]) - {"instance_attributes"}
        assert "action_recognition" in media["video"] and not set(offered) & set(media["video"])
        expect(first.locator("dd.answers")).to_have_text("english-vlm (vlm): q0-0")
        # the source line names the files the image was ingested from, then its hash
        source = first.locator("dd.source")
        expect(source.locator(".file")).to_have_text(PHOTO)
        expect(source.locator(".more-files")).to_have_text(f"(also {COPY})")
        # q1 counts four objects: the overlay draws each of the four, numbered, and the grey
        # region it did not count as context
        count = page.locator('[data-question="q1"]')
        count.focus()
        page.keyboard.press("o")
        cited = count.locator("svg.overlay .cited text")
        expect(cited).to_have_text(["1. red", "2. grey", "3. grey", "4. blue"], timeout=20_000)
        expect(count.locator("svg.overlay .context rect")).to_have_count(1)
        expect(count.locator(".boxes")).to_have_text("4 cited, 1 other facts")
        # ann edits q0's text: her text shows at once and after a reload, the generated one
        # folded under it
        first.focus()
        page.keyboard.press("e")
        page.keyboard.press("Control+a")
        page.keyboard.type("Which object here is red?")
        page.keyboard.press("Control+Enter")
        expect(first.locator(".current")).to_have_text("decided: edit")
        expect(first.locator(".item .question")).to_have_text("Which object here is red?")
        page.reload()
        expect(first.locator(".item > .question")).to_have_text("Which object here is red?")
        expect(first.locator(".as-written .question")).to_have_text("Question q0?")
        expect(first.locator(".twin .twin-outdated")).to_have_text(
            "written before this item changed in review: to be written again"
        )
        expect(count.locator(".twin .twin-outdated")).to_have_count(0)
        assert errors == []
        ann_page, ann_errors = page, errors

        page, errors = _twin_page(browser, url)
        q0, q1 = page.locator('[data-question="q0@zh"]'), page.locator('[data-question="q1@zh"]')
        # no model answered q0's twin: the English item's answers, said to be the English item's
        answers = q0.locator("dd.answers")
        expect(answers).to_have_attribute("data-of", "q0")
        expect(answers.locator(".of-english")).to_have_text(
            "the English item's (q0); none stored for this twin:"
        )
        expect(answers.locator(".answer")).to_have_text(["english-vlm (vlm): q0-0"])
        expect(q0.locator("dd.hits .of-english")).to_have_text("of the English item:")
        # q1's twin has answers of its own: those, never the English item's
        answers = q1.locator("dd.answers")
        expect(answers).to_have_attribute("data-of", "q1@zh")
        expect(answers.locator(".of-twin")).to_have_text("this zh twin's own:")
        expect(answers.locator(".answer")).to_have_text(["chinese-vlm (vlm): 蓝色的盒子"])
        # q0's twin was written before ann changed q0's text: the desk says so beside the
        # English item as it is now, refuses an accept with the reason, and writes it again
        expect(page.locator(".outdated")).to_have_count(1)
        expect(q0.locator(".english .question")).to_have_text("Which object here is red?")
        expect(q0.locator(".outdated .why")).to_have_text(
            "This twin was written before ann changed the English item's text: it cannot be "
            "accepted. Write it again from the English item as it is now, or reject it."
        )
        q0.focus()
        page.keyboard.press("a")
        expect(q0.locator(".message")).to_have_text(
            "the English item q0 changed in review after this twin was written (ann changed its "
            "text): the twin cannot be accepted; write it again from the English item as it is "
            "now (edit its text), or reject it"
        )
        errors.clear()  # the browser reports the refusal (422) itself
        expect(q0.locator(".current")).to_have_text("undecided")
        q0.locator("button.rewrite").click()
        expect(q0.locator("form.edit")).to_be_visible()
        page.keyboard.press("Control+a")
        page.keyboard.type("图中哪个物体是红色的？")
        page.keyboard.press("Control+Enter")
        expect(q0.locator(".current")).to_have_text("decided: edit")
        expect(q0.locator(".item > .question")).to_have_text("图中哪个物体是红色的？")
        assert errors == []
        # ann accepts q0 after all: her page shows it as written again
        first.focus()
        ann_page.keyboard.press("a")
        expect(first.locator(".current")).to_have_text("decided: accept")
        expect(first.locator(".item > .question")).to_have_text("Question q0?")
        assert ann_errors == []
        browser.close()

    li = [(r.question_id, r.decision, r.new_question) for r in ReviewStore.open(run).records()
          if r.reviewer == "li"]  # fmt: skip
    assert li == [("q0@zh", "edit", "图中哪个物体是红色的？")]  # the refused accept is not stored


def test_a_chinese_twin_is_drawn_with_glyphs_not_empty_boxes(twin_desk):
    """The twin's text reads back as given, in the stylesheet's CJK fonts; Chromium draws it
    in a font fontconfig has for Chinese, and its characters are glyphs, not the identical
    boxes of a missing font, which the same check finds on a Chromium with those fonts hidden."""
    from playwright.sync_api import expect, sync_playwright

    run, url = twin_desk
    cjk = _cjk_families()
    question = '[data-question="q1@zh"] .item .question'
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page, errors = _twin_page(browser, url)
        expect(page.locator(question)).to_have_text(TWIN_TEXT)
        family = page.locator(question).evaluate("e => getComputedStyle(e).fontFamily")
        assert family.startswith('"Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC"')
        fonts, glyphs = _drawn(page, question)
        assert fonts and set(fonts) <= cjk, fonts
        assert glyphs, "the twin's Chinese characters are drawn as identical boxes"
        assert errors == []
        browser.close()
        # The same check on a Chromium that sees no font for Chinese finds the boxes.
        hidden = Path(run.root) / "no-cjk-fonts.conf"
        hidden.write_text(NO_CJK_FONTS)
        env = {**os.environ, "FONTCONFIG_FILE": str(hidden)}
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"], env=env)
        page, _ = _twin_page(browser, url)
        fonts, glyphs = _drawn(page, question)
        assert not set(fonts) & cjk and not glyphs, fonts
        browser.close()
