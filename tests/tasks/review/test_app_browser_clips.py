"""The review desk in Chromium on a clip question: its clip plays only the stretch the question
may show, and it is decided with the keyboard."""

from __future__ import annotations

import re
import time
import urllib.request

import pytest

from benchfoundry.core.records import CandidateRecord, ScoredRecord
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder
from tests.tasks.review.test_app_browser import TOKEN, _serve, chromium, console_errors


@pytest.fixture
def clip_desk(tmp_path, scored_record, prefect_api):
    """A run built from synthetic procedure videos (ingest and the template generator), every
    procedure question in alice's batch."""
    from benchfoundry.devtools.synthetic_video import write_clips
    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.sources.models import VideoSource
    from benchfoundry.tasks.generate.options import GenerateOptions
    from benchfoundry.tasks.generate.stage import generate_all
    from benchfoundry.tasks.ingest.options import IngestOptions
    from benchfoundry.tasks.ingest.stage import run as ingest
    from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
    from benchfoundry.tasks.review.stage import export_batches

    write_clips(tmp_path / "corpus", 0, 2, seed=1)
    folder = tmp_path / "corpus" / "procedures"
    run = RunFolder(tmp_path / "run")
    source = VideoSource(path=folder, annotations=folder / "segments.csv")
    ingest(StageRun.make(run, sources=[source], ingest=IngestOptions(keyframes=2)))
    generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    wanted = [c for c in run.table(CandidateRecord).records() if c.dimension == "action_prediction"]
    run.table(ScoredRecord).append(
        [scored_record(c.question_id, c.image_id, dimension=c.dimension) for c in wanted]
    )
    export_batches(
        str(run.root), ReviewOptions(reviewers=[Reviewer(name="alice")], batch_size=60), "s"
    )
    ReviewStore.open(run).add_user("alice", "annotator", token=TOKEN)
    url, server = _serve(run)
    try:
        yield run, url, wanted
    finally:
        server.terminate()
        server.wait(timeout=20)


def _until(check, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the page did not get there in time"
        time.sleep(0.1)


def test_a_clip_question_plays_its_stretch_and_is_decided_with_the_keyboard(clip_desk):
    from playwright.sync_api import expect, sync_playwright

    run, url, wanted = clip_desk
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page()
        errors = console_errors(page)
        page.goto(f"{url}/?token={TOKEN}")
        page.locator("table.batches a").first.click()
        page.wait_for_load_state("load")
        first = page.locator(".sample").first
        expect(page.locator(".sample")).to_have_count(len(wanted))
        clip = first.locator("video.clip")
        start, end = float(clip.get_attribute("data-start")), float(clip.get_attribute("data-end"))
        question = next(c for c in wanted if c.question_id == first.get_attribute("data-question"))
        assert (start, end) == (float(question.meta["start"]), float(question.meta["end"]))
        # Its path says the flat dimension once; a move offers only the other video dimensions;
        # its source names the file, the stretch and the generator, the hashes folded away.
        expect(first.locator(".path")).to_have_text(re.compile(r"^1 of \d+ action_prediction$"))
        offered = first.locator("form.move option").all_inner_texts()
        assert sorted(offered) == ["action_recognition", "procedure_understanding"]
        source = first.locator("dd.source")
        meta = question.meta
        expect(source).to_contain_text(
            f"{meta['video']}, {meta['start']}\u2013{meta['end']} s ({question.generator})"
        )
        keyframes = meta["frames"].split(",")
        hashes = source.locator("details.hashes")
        expect(hashes.locator("summary")).to_have_text(
            f"clip, {len(keyframes)} keyframes and {len(meta['segments'].split(','))} segments "
            "by hash"
        )
        expect(hashes.get_by_text(keyframes[0])).to_be_hidden()
        hashes.locator("summary").click()
        expect(hashes.get_by_text(keyframes[0])).to_be_visible()
        first.focus()
        # (The page's policy forbids evaluated strings: poll from here.)
        _until(lambda: clip.evaluate("v => v.readyState") >= 1)
        assert clip.evaluate("v => v.duration") >= end  # the clip decodes in the browser
        page.keyboard.press("p")  # plays the stretch asked about, and stops at its end
        _until(lambda: clip.evaluate("v => !v.paused && v.currentTime > 0"))
        _until(lambda: clip.evaluate(f"v => v.paused && v.currentTime >= {end} - 0.1"))
        assert clip.evaluate("v => v.currentTime") <= end + 0.5
        page.keyboard.press("a")
        expect(first.locator(".current")).to_have_text("decided: accept")
        # Served in byte ranges, so a browser can seek: the first ten bytes alone.
        request = urllib.request.Request(
            f"{url}/clips/{question.meta['clip_id']}", headers={"Range": "bytes=0-9"}
        )
        request.add_header("Cookie", page.context.cookies()[0]["name"] + "=" + TOKEN)
        with urllib.request.urlopen(request) as response:
            assert response.status == 206 and len(response.read()) == 10
        assert errors == []
        browser.close()
