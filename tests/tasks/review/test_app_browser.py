"""The review app in a real browser: Playwright drives the system Chromium against
`benchfoundry review serve` running as its own process on 127.0.0.1. A reviewer decides five
samples with the keyboard (accept, reject, fix the answer, edit, move), reloads, and finds every
decision kept and shown; a question holding `<script>` shows as text and runs nothing."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from benchfoundry.core.records import CandidateRecord, ReviewRecord, ScoredRecord
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


@pytest.fixture
def served(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record, prefect_api):
    from typer.testing import CliRunner

    from benchfoundry.cli import app

    run = RunFolder(tmp_path / "run")
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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(BIN / "benchfoundry"), "review", "serve", "--out", str(run.root), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/batches", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(server.stderr.read().decode()) from None
                time.sleep(0.3)
        yield run, url
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_a_reviewer_decides_five_samples_with_the_keyboard_and_a_reload_keeps_them(served):
    from playwright.sync_api import expect, sync_playwright

    run, url = served
    executable = chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(url + "/")
        page.locator("table.batches a").first.click()
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
        script = page.locator('.sample[data-question="qscript"] .question')
        assert script.inner_text() == SCRIPT  # shown as text, not run
        assert page.evaluate("typeof window.pwned") == "undefined"
        browser.close()

    reviews = {r.question_id: r for r in run.table(ReviewRecord).records()}
    assert {r.tool for r in reviews.values()} == {"web"} and len(reviews) == 5
    assert reviews["q3"].reason and reviews["q3"].decision == "reject"
    assert reviews["q0"].new_answer == "C"
    assert reviews["q2"].new_question == "Which object is shown here?"
    assert reviews["q4"].new_dimension and reviews["q4"].new_dimension != "instance_identity"
    assert all(r.reviewer == "alice" and r.batch_id for r in reviews.values())
