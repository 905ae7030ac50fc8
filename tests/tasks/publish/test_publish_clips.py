"""A release of clip questions holds, for each, only what the question may show: the stretch cut
into a file of its own (an action prediction's ends where its shown steps end, before the answer),
its keyframes from inside the stretch, and a TSV row that carries those frames (VLMEvalKit's
multi-image form), read back the way VLMEvalKit and benchfoundry's evaluate read them."""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest

from benchfoundry.core import video
from benchfoundry.core.ids import sha256_hex
from benchfoundry.core.records import CandidateRecord, ClipRecord, ReviewRecord, SegmentRecord
from benchfoundry.decisions.reviews import AUTO, candidate_hash, now
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.devtools.synthetic_video import write_clips
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.sources.models import VideoSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.generate.options import GenerateOptions
from benchfoundry.tasks.generate.stage import generate_all
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.stage import run as ingest
from benchfoundry.tasks.publish.options import PublishOptions


@pytest.fixture(scope="module")
def clip_release(tmp_path_factory):
    """One synthetic procedure of three 1.5 s steps, its template questions accepted by the
    automatic reviewer and published; (run, release folder)."""
    root = tmp_path_factory.mktemp("clips")
    write_clips(root / "corpus", 0, 1, seed=2)
    folder = root / "corpus" / "procedures"
    run = RunFolder(root / "run")
    source = VideoSource(path=folder, annotations=folder / "segments.csv")
    ingest(StageRun.make(run, sources=[source], ingest=IngestOptions(keyframes=3)))
    generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    ReviewStore.open(run).add(
        [
            ReviewRecord(
                question_id=c.question_id,
                reviewer=AUTO,
                decision="accept",
                tool="auto",
                candidate_hash=candidate_hash(c),
                decided_at=now(),
            )
            for c in run.table(CandidateRecord).records()
        ]
    )
    options = PublishOptions(
        to=root / "releases", allow_unreviewed=True, letter_tolerance=1, longest_answer_share=1
    )
    stage = StageRun.make(run, publish=options)
    stage.name = "clips"
    summary = STAGES["publish"].run(stage)
    assert summary.written and summary.gate.success
    return run, root / "releases" / "clips" / summary.version


def _grey(image) -> np.ndarray:
    return np.asarray(image.convert("L"), dtype=float)


def test_a_prediction_question_s_clip_ends_where_its_shown_steps_end(clip_release):
    run, folder = clip_release
    rows = pd.read_parquet(folder / "data")
    predictions = rows[rows.dimension.str.endswith("action_prediction")]
    assert len(predictions) == 2  # shown: step 1 (answer step 2), steps 1-2 (answer step 3)
    (source,) = run.table(ClipRecord).records()
    steps = sorted(run.table(SegmentRecord).records(), key=lambda s: s.start)
    frame_times = {f: t for s in steps for f, t in zip(s.frames, s.frame_times, strict=True)}
    for row in predictions.itertuples():
        answer = next(s for s in steps if s.label == row.options[ord(row.answer) - ord("A")])
        assert (row.clip_id, row.clip_start) == (source.clip_id, 0.0)
        assert row.clip_end == answer.start  # the shown steps end where the answer begins
        data = (folder / row.video).read_bytes()
        assert row.video == f"videos/{sha256_hex(data)}.mp4"  # named by its content hash
        info = video.inspect_clip(data)  # read back with PyAV, every frame decoded
        assert (row.video_start, row.video_end) == (0.0, info.duration)
        assert info.duration == row.clip_end - row.clip_start
        assert info.frames == round((row.clip_end - row.clip_start) * source.fps)
        # its last frame is the source's last shown frame, not one of the answer's step
        (last,) = video.frames_at(data, [info.duration])
        before, after = video.frames_at(source.bytes, [row.clip_end - 0.01, answer.end - 0.01])
        assert (
            np.abs(_grey(last) - _grey(before)).mean() < np.abs(_grey(last) - _grey(after)).mean()
        )
        # the keyframes it carries all lie in the stretch
        frames = [f.removeprefix("frames/").removesuffix(".png") for f in row.video_frames]
        assert len(frames) >= 3 and all((folder / f).is_file() for f in row.video_frames)
        assert all(row.clip_start <= frame_times[f] < row.clip_end for f in frames)
        assert frame_times[row.image_id] < row.clip_end  # the keyframe shown as `image` too
    manifest = json.loads((folder / "manifest.json").read_text())
    assert all(v in manifest["files"] for v in rows.video)
    assert manifest["videos"] == rows.video.nunique() > 1
    assert not any(p.name.startswith(".tmp-") for p in folder.parent.iterdir())
    card = (folder / "README.md").read_text()
    assert "`videos/<sha256>.mp4` (5 files)" in card and "`frames/<image id>.png`" in card
    assert "`video_start` is 0 and `video_end` the file's duration" in card


def test_the_tsv_carries_each_clip_question_s_frames_as_vlmevalkit_reads_them(clip_release):
    _, folder = clip_release
    rows = pd.read_parquet(folder / "data").set_index("index")
    tsv = pd.read_csv(folder / "clips.tsv", sep="\t")  # VLMEvalKit's reader
    # VLMEvalKit's own rules: an `image` of 64 characters or fewer names the row that carries
    # it; a value written as a list is a list (`toliststr`)
    by_index = {str(i): str(v) for i, v in zip(tsv["index"], tsv["image"], strict=True)}
    for line in tsv.to_dict("records"):
        value = by_index[str(line["index"])]
        value = by_index[value] if len(value) <= 64 else value
        images = json.loads(value) if value.startswith("[") else [value]
        paths = json.loads(line["image_path"]) if line["image_path"].startswith("[") else None
        row = rows.loc[line["index"]]
        assert len(images) == len(row.video_frames) >= 3 and len(paths) == len(images)
        for image, frame, name in zip(images, row.video_frames, paths, strict=True):
            assert base64.b64decode(image) == (folder / frame).read_bytes()
            assert name == frame.removeprefix("frames/")
        assert (line["video"], line["video_start"], line["video_end"]) == (
            row.video,
            0.0,
            row.video_end,
        )


def test_evaluate_reads_each_clip_question_as_its_stretch_s_file(clip_release):
    from benchfoundry.tasks.evaluate.dataset import load_eval_dataset

    _, folder = clip_release
    rows = pd.read_parquet(folder / "data").set_index("question_id")
    dataset = load_eval_dataset(folder)
    assert len(dataset.questions) == len(rows)
    for q in dataset.questions:
        path, start, end = q.item.video
        row = rows.loc[q.item.question_id]
        assert path == str((folder / row.video).resolve()) and (start, end) == (0.0, row.video_end)


def test_publishing_the_same_clip_questions_again_cuts_the_same_bytes(clip_release):
    """The cuts are the same bytes on a rerun (one encoder thread, fixed options), so the
    version is too and nothing is written; no hidden folder of cuts is left behind."""
    run, folder = clip_release
    options = PublishOptions(
        to=folder.parent.parent, allow_unreviewed=True, letter_tolerance=1, longest_answer_share=1
    )
    stage = StageRun.make(run, publish=options)
    stage.name = "clips"
    again = STAGES["publish"].run(stage)
    assert again.version == folder.name and not again.written
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted(
        [".lock", "latest", folder.name]
    )


@pytest.mark.browser
def test_the_release_explorer_plays_a_clip_question_only_for_its_stretch(clip_release):
    """The explorer publish writes (`explore/`, docs/explore.md), in Chromium: an action
    prediction's page plays its stretch and stops at its end, where its shown steps end in the
    source clip (the answer's step is not in the file either)."""
    from playwright.sync_api import sync_playwright

    from tests.tasks.review.test_app_browser import chromium

    _, folder = clip_release
    rows = pd.read_parquet(folder / "data")
    row = rows[rows.dimension.str.endswith("action_prediction")].iloc[-1]
    stretch = row.clip_end - row.clip_start
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((folder / "explore" / "index.html").as_uri() + f"#/item/{row.question_id}/en")
        page.wait_for_selector("body[data-ready=item]")
        assert float(page.get_attribute("#clip", "data-end")) == pytest.approx(stretch, abs=0.05)
        page.evaluate(
            "() => { const v = document.getElementById('clip'); v.muted = true; v.play(); }"
        )
        page.wait_for_function(
            "() => { const v = document.getElementById('clip'); return v.paused && v.currentTime > 0; }",
            timeout=20000,
        )
        played, duration = page.evaluate(
            "() => { const v = document.getElementById('clip'); return [v.currentTime, v.duration]; }"
        )
        browser.close()
    assert played == pytest.approx(stretch, abs=0.1)
    assert duration == pytest.approx(stretch, abs=0.1)
