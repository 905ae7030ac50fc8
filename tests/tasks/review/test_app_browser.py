"""The review app in a real browser: Playwright drives the system Chromium against
`benchfoundry review serve` running as its own process on 127.0.0.1. A reviewer decides five
samples with the keyboard (accept, reject, fix the answer, edit, move), reloads, and finds every
decision kept and shown; a question holding `<script>` shows as text and runs nothing. The desk:
the evidence overlay lands on the image's pixels in the page and in the zoom view, the keyboard
flow crosses the pages of a long batch, the reviewer page, and a conflict settled from the queue
with one key."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchfoundry.core.records import CandidateRecord, NotAskedRecord, ScoredRecord
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.browser
BIN = Path(sys.executable).parent
SCRIPT = "<script>window.pwned = 1</script> Which <b>shape</b> is shown?"


def chromium() -> str:
    """The system Chromium; skipped where there is none (an error under CI=true)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    reason = "no Chromium on this machine (scripts/setup.sh installs Debian's 'chromium' as root)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


TOKEN = "alice-browser-token-0123456789abcdef"  # alice, the annotator
ODD_SOURCE = "/photos/<b>blank</b> page.png"  # a file name holding HTML, shown as text
LEAD_TOKEN = "lead-browser-token-0123456789abcdef"  # lead, an adjudicator


@pytest.fixture
def served(
    module_servers,
    tmp_path_factory,
    image_bytes,
    store_raw_image,
    candidate_record,
    scored_record,
    prefect_api,
):
    """The app served by the CLI, with alice (the annotator of the batch) as a user; one run
    and server for the module's tests (the sign-in test decides nothing)."""
    if "served" not in module_servers:
        module_servers["served"] = _served(
            tmp_path_factory.mktemp("served"), image_bytes, store_raw_image, candidate_record,
            scored_record,
        )  # fmt: skip
    run, url, _ = module_servers["served"]
    return run, url


def _served(tmp, image_bytes, store_raw_image, candidate_record, scored_record) -> tuple:
    from typer.testing import CliRunner

    from benchfoundry.cli import app

    run = RunFolder(tmp / "run")
    image = store_raw_image(run, image_bytes((64, 48)))
    questions = [f"q{i}" for i in range(5)] + ["qscript"]
    run.table(CandidateRecord).append(
        [
            candidate_record(q, image, dimension="instance_identity",
                             question=SCRIPT if q == "qscript" else f"Question {q}?")
            for q in questions
        ]
    )  # fmt: skip
    run.table(ScoredRecord).append(
        [
            scored_record(
                q,
                image,
                dimension="instance_identity",
                hits_text=i,
                difficulty="tough",
                decision="flagged" if i % 2 else "selected",
                flags=["possibly_flawed"] if i % 2 else [],
            )
            for i, q in enumerate(questions)
        ]  # fmt: skip
    )
    result = CliRunner().invoke(
        app, ["review", "export", "--out", str(run.root), "--reviewers", "alice", "--json"]
    )
    assert result.exit_code == 0, result.output
    ReviewStore.open(run).add_user("alice", "annotator", token=TOKEN)
    run.table(NotAskedRecord).append(  # a picture the build asked nothing, as generate says
        [
            NotAskedRecord(image_id="blank", source=ODD_SOURCE, dimension=d, template=t, reason=r)
            for d, t, r in [("instances_counting", "count", "no_objects"),
                            ("text_understanding", "read_text", "no_text")]
        ]
    )  # fmt: skip
    return (run, *_serve(run))


def _serve(run: RunFolder) -> tuple[str, subprocess.Popen]:
    """`benchfoundry review serve` on a free port, once it answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["review", "serve", "--out", str(run.root), "--port", str(port)]
    server = subprocess.Popen(
        [str(BIN / "benchfoundry"), *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/static/review.css", timeout=2).read()
            return url, server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.terminate()
                raise RuntimeError(server.stderr.read().decode()) from None
            time.sleep(0.3)


def console_errors(page) -> list[str]:
    """Every console error and uncaught script error the page reports from now on."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_a_reviewer_decides_five_samples_with_the_keyboard_and_a_reload_keeps_them(served):
    from playwright.sync_api import expect, sync_playwright

    run, url = served
    executable = chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        errors = console_errors(page)
        response = page.goto(f"{url}/?token={TOKEN}")  # signs in; the token leaves the address
        assert page.url == url + "/"
        assert response.headers["content-security-policy"].startswith("default-src 'self'")
        page.locator("table.batches a").first.click()
        page.wait_for_load_state("load")  # the keys work once review.js has run
        samples = page.locator(".sample")
        expect(samples).to_have_count(6)
        # Flagged first, then by hits ascending: q1, q3, q5? (q5 absent) then q0, q2, q4.
        order = [samples.nth(i).get_attribute("data-question") for i in range(6)]
        assert order[:3] == ["q1", "q3", "qscript"] and order[3:] == ["q0", "q2", "q4"]

        current = lambda i: samples.nth(i).locator(".current")  # noqa: E731
        page.keyboard.press("a")
        expect(current(0)).to_have_text("decided: accept")
        page.keyboard.press("j")
        page.keyboard.press("r")
        page.keyboard.press("Enter")
        expect(current(1)).to_contain_text("decided: reject")
        page.keyboard.press("j")  # the script sample: leave it undecided
        page.keyboard.press("j")
        page.keyboard.press("f")
        page.keyboard.press("C")
        expect(current(3)).to_have_text("decided: fix_answer answer C")
        page.keyboard.press("j")
        page.keyboard.press("e")
        page.keyboard.press("Control+a")
        page.keyboard.type("Which object is shown here?")
        page.keyboard.press("Control+Enter")
        expect(current(4)).to_have_text("decided: edit")
        edited = samples.nth(4).locator(".item > .question")
        expect(edited).to_have_text("Which object is shown here?")  # the new text, at once
        expect(samples.nth(3).locator(".item > ol.options li.key")).to_have_attribute(
            "data-letter", "C"
        )
        page.keyboard.press("j")
        page.keyboard.press("m")
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        expect(current(5)).to_contain_text("decided: move to ")
        expect(page.locator("#progress")).to_have_text("5 of 6 decided")

        page.reload()
        expect(page.locator("#progress")).to_have_text("5 of 6 decided")
        texts = [samples.nth(i).locator(".current").inner_text() for i in range(6)]
        assert texts[0].startswith("decided: accept") and texts[1].startswith("decided: reject")
        assert texts[2] == "undecided" and texts[3].startswith("decided: fix_answer answer C")
        assert texts[4].startswith("decided: edit") and texts[5].startswith("decided: move to")
        expect(edited).to_have_text("Which object is shown here?")  # and after a reload
        expect(samples.nth(4).locator(".as-written .question")).to_have_text("Question q2?")
        expect(samples.nth(3).locator(".item > ol.options li.key")).to_have_attribute(
            "data-letter", "C"
        )
        script = page.locator('.sample[data-question="qscript"] .question')
        assert script.inner_text() == SCRIPT  # shown as text, not run
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert errors == []  # no CSP violation, no script error
        # The policy is in force: an inline script added to the page is refused and reported.
        with pytest.raises(Exception):  # noqa: B017 - Playwright's error names no type
            page.add_script_tag(content="window.inlined = 1")
        assert page.evaluate("typeof window.inlined") == "undefined"
        assert any("Content Security Policy" in e for e in errors), errors
        browser.close()

    reviews = {r.question_id: r for r in ReviewStore.open(run).records()}
    assert {r.tool for r in reviews.values()} == {"web"} and len(reviews) == 5
    assert reviews["q3"].reason and reviews["q3"].decision == "reject"
    assert reviews["q0"].new_answer == "C"
    assert reviews["q2"].new_question == "Which object is shown here?"
    assert reviews["q4"].new_dimension and reviews["q4"].new_dimension != "instance_identity"
    assert all(r.reviewer == "alice" and r.batch_id for r in reviews.values())


def test_a_reviewer_signs_in_with_the_token_and_out_again(served):
    from playwright.sync_api import expect, sync_playwright

    run, url = served
    executable = chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        errors = console_errors(page)
        page.goto(url + "/")
        expect(page).to_have_url(url + "/signin")
        page.fill("input[name=token]", "not-it")
        page.keyboard.press("Enter")
        expect(page.locator("#signin .message")).to_have_text("that token is not valid")
        errors.clear()  # the browser reports the 401 itself
        page.fill("input[name=token]", TOKEN)
        page.keyboard.press("Enter")
        expect(page).to_have_url(url + "/")
        expect(page.locator("table.batches a.reviewer")).to_have_count(1)
        nothing = page.locator("details.asked-nothing")
        expect(nothing.locator("summary")).to_have_text("1 picture asked nothing, and why")
        nothing.locator("summary").click()
        expect(nothing.locator("td.source")).to_have_text(ODD_SOURCE)
        expect(nothing.locator("td").nth(1)).to_have_text("no_objects, no_text")
        assert page.evaluate("document.cookie") == ""  # http-only: no script can read it
        (cookie,) = page.context.cookies()
        assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"]) == (
            "review_token",
            True,
            "Strict",
        )
        page.locator("#signout button").click()
        expect(page).to_have_url(url + "/signin")
        assert page.context.cookies() == []
        page.goto(url + "/")
        expect(page).to_have_url(url + "/signin")
        assert errors == []

        # A sign-in link that does not work (mistyped, or its user revoked) gets a page that
        # says what to do; a client that asks for JSON still gets JSON.
        ReviewStore.open(run).add_user("gone", "annotator", token="gone-token-0123456789abcdef")
        ReviewStore.open(run).revoke("gone")
        for token in ("not-a-token-at-all", "gone-token-0123456789abcdef"):
            response = page.goto(f"{url}/?token={token}")
            assert response.status == 401
            assert response.headers["content-type"].startswith("text/html")
            expect(page.locator("h1")).to_have_text("This sign-in link does not work")
            expect(page.locator("#link-refused")).to_contain_text(
                "benchfoundry review users add NAME --role annotator --out RUN"
            )
            expect(page.locator("#link-refused a")).to_have_attribute("href", "/signin")
        request = urllib.request.Request(
            f"{url}/?token=not-a-token-at-all", headers={"Accept": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 401
        assert json.loads(refused.value.read()) == {"error": "that token is not valid"}
        browser.close()


@pytest.fixture
def desk(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record, prefect_api):
    """A run with one reviewer's batch of 55 questions (two pages) about a 200 x 100 image whose
    facts hold one instance and one text line, and one conflict between two reviewers."""
    from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
    from benchfoundry.decisions.reviews import Decision, record
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
    from benchfoundry.tasks.review.stage import export_batches

    run = RunFolder(tmp_path / "desk")
    image = store_raw_image(run, image_bytes((200, 100)), size=(200, 100))
    run.table(VisualFactsRecord).append(
        [
            VisualFactsRecord(
                image_id=image, config_hash="c", captions=[], extractors=[],
                instances=[Instance(box=[20.0, 10.0, 70.0, 60.0], mask_area=9, label=None,
                                    attributes=["red", "round", "top left"], dense_caption=None,
                                    score=1.0)],
                ocr_lines=[OcrLine(text="<b>EXIT</b>", box=[100.0, 60.0, 180.0, 90.0],
                                   score=0.9)],
            )
        ]
    )  # fmt: skip
    questions = [f"q{i:02d}" for i in range(55)]
    run.table(CandidateRecord).append(
        [
            candidate_record(q, image, dimension="instance_identity",
                             evidence=["instance at [20, 10, 70, 60]", 'OCR line "<b>EXIT</b>"'])
            for q in questions
        ]
    )  # fmt: skip
    run.table(ScoredRecord).append(
        [
            scored_record(q, image, dimension="instance_identity", hits_text=i)
            for i, q in enumerate(questions)
        ]
    )
    export_batches(
        str(run.root), ReviewOptions(reviewers=[Reviewer(name="alice")], batch_size=60), "s"
    )
    conflict = [
        Decision("q54", "alice", "accept", decided_at="2026-12-01T10:00:00.0Z", lead_time_s=3),
        Decision("q54", "bo", "fix_answer", new_answer="C", decided_at="2026-12-01T10:05:00.0Z"),
    ]
    assert record(run, conflict, "web")[2] == []
    ReviewStore.open(run).add_user("alice", "annotator", token=TOKEN)
    ReviewStore.open(run).add_user("lead", "adjudicator", token=LEAD_TOKEN)
    url, server = _serve(run)
    try:
        yield run, url
    finally:
        server.terminate()
        server.wait(timeout=20)


def _box(locator) -> dict:
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); "
                            "return {x: r.x, y: r.y, width: r.width, height: r.height}; }")  # fmt: skip


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 1.5


def test_the_desk_overlay_zoom_pages_reviewer_page_and_queue(desk):
    from playwright.sync_api import expect, sync_playwright

    run, url = desk
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}/?token={TOKEN}")
        page.locator("table.batches td a").first.click()
        page.wait_for_load_state("load")  # the keys work once review.js has run
        samples = page.locator(".sample")
        expect(samples).to_have_count(50)
        expect(page.locator("nav.pages .page-of").first).to_have_text("page 1 of 2")
        expect(page.locator("#progress")).to_have_text("1 of 55 decided")  # q54, in the conflict

        # The evidence overlay: the cited instance and text line over the full image.
        first = samples.nth(0)
        page.keyboard.press("o")
        rects = first.locator("svg.overlay rect")
        expect(rects).to_have_count(2, timeout=20_000)  # the full image loads first
        expect(first.locator("img.shot")).to_have_attribute("src", re.compile(r"/images/\w+$"))
        labels = first.locator("svg.overlay text").all_text_contents()
        assert labels == ["red", "<b>EXIT</b>"]  # text, not markup
        image, box = _box(first.locator("img.shot")), _box(rects.nth(0))
        scale = image["width"] / 200
        assert _near(box["x"] - image["x"], 20 * scale) and _near(box["width"], 50 * scale)
        assert _near(box["y"] - image["y"], 10 * scale) and _near(box["height"], 50 * scale)

        # Zoom: a larger view whose overlay still lands on the image's pixels.
        page.keyboard.press("z")
        dialog = page.locator("dialog#zoom")
        expect(dialog).to_have_attribute("open", "")
        fit = float(dialog.get_attribute("data-scale"))
        page.keyboard.press("+")
        assert abs(float(dialog.get_attribute("data-scale")) - fit * 1.5) < 1e-9
        zoomed = _box(dialog.locator(".zoom-image"))
        assert _near(zoomed["width"], 200 * fit * 1.5)
        rect = _box(dialog.locator("svg.overlay .cited rect").nth(0))
        assert _near(rect["x"] - zoomed["x"], 20 * fit * 1.5)
        assert _near(rect["width"], 50 * fit * 1.5)
        page.keyboard.press("Escape")
        expect(dialog).not_to_have_attribute("open", "")
        assert page.evaluate("document.activeElement.dataset.question") == "q00"
        # The browser may fire the dialog's "close" after the next key (keys come first on a
        # busy machine): a late one leaves the reviewer on the sample the key moved to.
        page.keyboard.press("j")
        expect(samples.nth(1)).to_be_focused()
        page.evaluate("document.getElementById('zoom').dispatchEvent(new Event('close'))")
        assert page.evaluate("document.activeElement.dataset.question") == "q01"
        page.keyboard.press("k")
        expect(samples.nth(0)).to_be_focused()

        # The keyboard flow crosses pages: j from the last sample opens page 2, k goes back.
        for i in range(1, 50):  # each key handled before the next (a busy machine drops none)
            page.keyboard.press("j")
            expect(page.locator(f'.sample[data-question="q{i:02d}"]')).to_be_focused()
        page.keyboard.press("j")
        expect(page).to_have_url(re.compile(r"\?page=2$"))
        expect(samples).to_have_count(5)
        expect(page.locator(".sample").first).to_be_focused()
        page.keyboard.press("a")
        expect(samples.nth(0).locator(".current")).to_have_text("decided: accept")
        expect(page.locator("#progress")).to_have_text("2 of 55 decided")
        page.keyboard.press("k")
        expect(page).to_have_url(re.compile(r"\?page=1#last$"))
        expect(page.locator('.sample[data-question="q49"]')).to_be_focused()

        # The reviewer page, linked from the batch list.
        page.goto(url + "/")
        page.locator("a.reviewer").first.click()
        expect(page.locator("h1")).to_have_text("alice")
        expect(page.locator("table.kinds")).to_contain_text("accept")
        expect(page.locator("table.agreement")).to_contain_text("bo")

        # The queue: the overlay is shown on arrival; take bo's decision with its key.
        page.goto(f"{url}/conflicts?token={LEAD_TOKEN}")  # the adjudicator signs in
        expect(page.locator("#left")).to_have_text("1 conflict left")
        expect(page.locator(".me")).to_have_text("adjudicating as lead")
        conflict = page.locator(".conflict").first
        expect(conflict).to_be_focused()
        expect(conflict.locator("svg.overlay rect")).to_have_count(2)  # shown on arrival
        expect(conflict.locator("figure.overlay-on")).to_have_count(1)
        page.keyboard.press("o")
        expect(conflict.locator("figure.overlay-on")).to_have_count(0)
        page.keyboard.press("2")
        expect(conflict.locator(".current")).to_have_text("settled by lead: fix_answer answer C")
        expect(page.locator("#left")).to_have_text("0 conflicts left")
        page.reload()
        expect(page.locator(".conflict")).to_have_count(0)
        assert errors == []
        browser.close()

    settled = [r for r in ReviewStore.open(run).records() if r.reviewer == "lead"]
    assert [(r.question_id, r.decision, r.new_answer, r.adjudication) for r in settled] == [
        ("q54", "fix_answer", "C", True)
    ]
