"""A build from `videos` sources, as a user runs it (`benchfoundry build`): synthetic clips
encoded by PyAV (single actions in SSv2's form, procedures in the segments form), four broken
inputs, and one real Prefect build of every stage with `generate: {llm: false}`, whose
vision-language ensemble and evaluated models are OpenAI-compatible endpoints on a local test
server: one shown 4 frames of each clip's stretch, one the clip itself."""

import csv
import json

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import (
    CandidateRecord,
    ClipRecord,
    ImageRecord,
    MotionFactsRecord,
    QuarantineRecord,
    SegmentRecord,
)
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")


def _add_faults(root):
    """A truncated clip, an empty file, a label for a missing clip, a segment past its end."""
    whole = (root / "clips" / "1000.mp4").read_bytes()
    (root / "clips" / "truncated.mp4").write_bytes(whole[: len(whole) // 2])
    (root / "clips" / "empty.mp4").write_bytes(b"")
    (root / "clips" / "notavideo.mp4").write_bytes(b"a text file named as a clip\n" * 20)
    labels = json.loads((root / "clips" / "labels.json").read_text())
    labels += [
        {"id": "truncated", "label": "Moving red circle up", "template": "Moving [something] up"},
        {"id": "empty", "label": "Moving red circle up", "template": "Moving [something] up"},
        {"id": "notavideo", "label": "Moving red circle up", "template": "Moving [something] up"},
        {"id": "9999", "label": "Moving red circle down", "template": "Moving [something] down"},
    ]
    (root / "clips" / "labels.json").write_text(json.dumps(labels))
    with open(root / "procedures" / "segments.csv", "a", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerow(
            ["procedure_00.mp4", "4", "60", "move the red circle away"]
        )


@pytest.fixture(scope="module")
def video_build(tmp_path_factory):
    """The synthetic clips, the faults and the whole build; (folder, run, request bodies)."""
    import os

    from benchfoundry.devtools.testserver import Oracle, Script, TestServer

    root = tmp_path_factory.mktemp("video")
    made = CliRunner().invoke(
        app, ["synth", "-o", str(root), "--objects", "0", "--text", "0", "--clips", "8",
              "--procedures", "3"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    _add_faults(root)
    oracle = Oracle(root / "run")  # knows the keys: questions pass consensus and review
    key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "sk-test-not-a-secret"
    try:
        with TestServer(Script(default=lambda request: oracle.answer(request.text))) as server:
            (root / "models.yaml").write_text(
                "models:\n"
                f"  - {{name: frames-vlm, provider: openai, model: v, base_url: '{server.base_url}', frames: 4}}\n"
                f"  - {{name: video-vlm, provider: openai, model: v, base_url: '{server.base_url}', video: true}}\n"
            )
            (root / "spec.yaml").write_text(
                "name: clips\n"
                "sources:\n"
                "  - {kind: videos, path: clips, annotations: clips/labels.json, format: ssv2}\n"
                "  - {kind: videos, path: procedures, annotations: procedures/segments.csv}\n"
                "model_catalogue: models.yaml\n"
                "models: {text_only: [blind/random], vlm: [video-vlm]}\n"
                "stages: [ingest, extract, generate, filter, consensus, select, review, publish, "
                "evaluate]\n"
                "options:\n"
                "  ingest: {keyframes: 3}\n"
                "  extract: {ocr: none}\n"  # the clips hold no text to read
                "  filter: {blind: [blind/longest]}\n"  # no sentence encoder to load for it
                "  generate: {llm: false}\n"
                "  select: {target: 3, max_per_image: 5}\n"
                "  review: {auto: true}\n"
                "  publish: {allow_unreviewed: true, letter_tolerance: 1, longest_answer_share: 1}\n"
                "  evaluate: {models: [frames-vlm, video-vlm], mode: vanilla}\n"
                "output: run\n"
            )
            result = CliRunner().invoke(app, ["build", str(root / "spec.yaml"), "--json"])
            bodies = list(server.stats.bodies)
    finally:
        if key is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = key
    assert result.exit_code == 0, result.output
    return root, RunFolder(root / "run"), bodies, json.loads(result.stdout)


def test_a_build_from_video_sources_asks_all_three_temporal_dimensions(video_build):
    tmp_path, run, _, _ = video_build
    clips = run.table(ClipRecord).records()
    assert len(clips) == 8 + 3 and all(c.codec == "h264" and c.duration > 1 for c in clips)
    segments = run.table(SegmentRecord).records()
    assert all(len(s.frames) == 3 and s.start < s.end for s in segments)
    kinds = {i.image_id: i.source_kind for i in run.table(ImageRecord).records()}
    assert {kinds[f] for s in segments for f in s.frames} == {"keyframe"}

    refused = {
        (q.reason, q.source.rsplit("/", 1)[-1]) for q in run.table(QuarantineRecord).records()
    }
    assert ("truncated_clip", "truncated.mp4") in refused
    assert ("empty_clip", "empty.mp4") in refused
    assert ("undecodable_clip", "notavideo.mp4") in refused
    said = next(
        q.detail
        for q in run.table(QuarantineRecord).records()
        if q.source.endswith("notavideo.mp4")
    )
    assert said.startswith("not a video file (FFmpeg could not read it: ") and "Errno" not in said
    assert ("missing_clip", "labels.json#id=9999") in refused
    assert any(r == "segment_past_end" and s.startswith("segments.csv#line=") for r, s in refused)
    faulty = ("labels.json#id=truncated", "labels.json#id=empty", "labels.json#id=notavideo")
    assert {r for r, s in refused if s in faulty} == {"clip_rejected"}

    candidates = run.table(CandidateRecord).records()
    by_dimension: dict[str, list[CandidateRecord]] = {}
    for c in candidates:
        by_dimension.setdefault(c.dimension, []).append(c)
    assert set(by_dimension) == {
        "action_recognition",
        "action_prediction",
        "procedure_understanding",
    }  # no spatial question about a keyframe
    truth = {(s.video, s.start, s.end): s.label for s in segments}
    orders: dict[str, list[SegmentRecord]] = {}
    for s in sorted(segments, key=lambda s: s.start):
        orders.setdefault(s.clip_id, []).append(s)
    for c in candidates:
        assert (
            c.meta["video"] and c.meta["clip_id"] and float(c.meta["start"]) < float(c.meta["end"])
        )
        assert len({o.casefold() for o in c.options}) == len(c.options) == 4
        key = c.options[LETTERS.index(c.answer)]
        steps = orders[c.meta["clip_id"]]
        if c.dimension == "action_recognition":
            assert key == truth[(c.meta["video"], float(c.meta["start"]), float(c.meta["end"]))]
            parts = c.option_slots[LETTERS.index(c.answer)]
            (segment,) = [s for s in steps if s.label == key]
            if segment.placeholders:  # SSv2: the same object in another template is offered
                obj = segment.placeholders[0]
                assert sum(obj in o for o in c.options) >= 2, (key, c.options)
                assert parts["template"] == segment.family
            else:  # the procedures' verb and noun columns
                assert (parts["verb"], parts["action_noun"]) == (segment.family, segment.noun)
        elif c.dimension == "action_prediction":
            shown = [s for s in steps if s.end <= float(c.meta["end"])]
            assert key == steps[len(shown)].label  # the segment right after what is shown
            assert c.image_id in shown[-1].frames  # no frame of the answer's segment
        else:
            assert key == ", then ".join(s.label for s in steps)
    # Motion facts: every segment tracked; a synthetic move is seen going the way its label says.
    motion = {m.segment_id: m for m in run.table(MotionFactsRecord).records()}
    assert set(motion) == {s.segment_id for s in segments}
    ways = {"up": "up", "down": "down", "from left to right": "to the right",
            "from right to left": "to the left"}  # fmt: skip
    checked = 0
    for s in segments:
        for label_end, way in ways.items():
            if s.family == f"Moving [something] {label_end}":
                moved = [e.detail for e in motion[s.segment_id].events if e.event == "moved"]
                assert any(d.startswith(way) or f"and {way}" in d for d in moved), (s.label, moved)
                checked += 1
    assert checked >= 2
    ingest = run.read_manifest()["ingest"]["summary"]
    assert (ingest["clips_read"], ingest["clips_added"]) == (14, 11)
    assert ingest["segments_added"] == len(segments)


def test_a_video_build_publishes_its_clips_and_evaluates_them_as_frames_or_video(video_build):
    import pandas as pd

    from benchfoundry.core.video import inspect_clip
    from benchfoundry.storage.releases import read_manifest

    tmp_path, run, bodies, summary = video_build
    kinds = [
        [p["type"] for p in b["messages"][-1]["content"]]
        for b in bodies
        if isinstance(b["messages"][-1]["content"], list)
    ]
    assert ["video_url", "text"] in kinds  # consensus and evaluation: the clip itself
    assert ["image_url"] * 4 + ["text"] in kinds  # evaluation: four frames of the stretch
    release = summary["summaries"]["publish"]
    assert release["written"]
    folder = tmp_path / "releases" / "clips" / release["version"]
    rows = pd.read_parquet(folder / "data")
    clips = rows[rows.video.notna()]
    assert len(clips) == len(rows) and set(clips.l2_category) >= {"Action Recognition"}
    manifest = read_manifest(folder)
    assert manifest["videos"] == clips.video.nunique()
    assert all((folder / v).is_file() and v in manifest["files"] for v in clips.video)
    # each file is its question's stretch alone (read back with PyAV): an action prediction's
    # ends where its shown steps end, so the answer is not in it
    for row in clips.itertuples():
        info = inspect_clip((folder / row.video).read_bytes())
        assert (row.video_start, row.video_end) == (0.0, info.duration)
        assert abs(info.duration - (row.clip_end - row.clip_start)) <= 1 / info.fps + 1e-3
    frames = {f for fs in clips.video_frames for f in fs}
    assert frames and all((folder / f).is_file() and f in manifest["files"] for f in frames)
    assert "videos: " in (folder / "README.md").read_text()  # the source, without its folders
    assert str(tmp_path) not in (folder / "README.md").read_text()
    assert summary["summaries"]["evaluate"]


def test_a_killed_evaluation_of_images_and_clips_makes_no_call_twice(video_build, tmp_path):
    """The release's clips (and keyframe images) evaluated by a served model shown frames and a
    local vision-language model (a tiny Gemma 3 of the real classes), killed after its first
    stored batch and run again by the CLI: together the two processes make exactly the calls of
    one uninterrupted evaluation, to the server and to the local model alike."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from benchfoundry.devtools.testserver import Script, TestServer
    from benchfoundry.gateway.usage import read_journal
    from tests.benchfoundry.gateway.tiny_families import gemma3

    root, _, _, summary = video_build
    release = root / "releases" / "clips" / summary["summaries"]["publish"]["version"]
    local = gemma3(tmp_path / "gemma3")
    repo = Path(__file__).resolve().parents[2]
    script = (
        "import sys\n"
        "from benchfoundry.tasks.evaluate.options import EvaluateOptions\n"
        "from benchfoundry.pipeline.registry import STAGES, StageRun\n"
        "options = EvaluateOptions(dataset=sys.argv[2], models=sys.argv[3:], batch_size=4)\n"
        "STAGES['evaluate'].run(StageRun.make(sys.argv[1], evaluate=options))\n"
    )
    with TestServer(Script(default="B")) as server:
        (tmp_path / "models.yaml").write_text(
            "models:\n"
            f"  - {{name: served, provider: openai, model: v, base_url: '{server.base_url}', "
            "frames: 3}\n"
            f"  - {{name: local, provider: hf, model: '{local}', frames: 2}}\n"
        )
        env = {
            **os.environ,
            "BENCHFOUNDRY_MODELS": str(tmp_path / "models.yaml"),
            "OPENAI_API_KEY": "sk-test-not-a-secret",
        }

        def cli(out):
            done = subprocess.run(
                [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(out),
                 "--dataset", str(release), "--model", "served", "--model", "local", "--json"],
                env=env, cwd=repo, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-2000:]
            return json.loads(done.stdout)

        cli(tmp_path / "whole")
        whole_requests = server.stats.requests
        killed = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "run"), str(release), "served", "local"],
            env={**env, "BENCHFOUNDRY_CRASH_AT": "evaluate.after_batch"},
            cwd=repo, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        resumed = cli(tmp_path / "run")
        # The served model's questions go side by side (4 at once): the calls still in flight
        # when the process was killed are asked again, and nothing else is.
        again = server.stats.requests - 2 * whole_requests
        assert 0 <= again <= 4
    assert any(s["reused"] > 0 for s in resumed["scores"]), "the kill left answers to reuse"
    calls = {
        out: {m: u.calls for m, u in read_journal(tmp_path / out)["evaluate"].items()}
        for out in ("whole", "run")
    }
    assert set(calls["whole"]) == {"served", "local"}
    assert calls["run"]["local"] == calls["whole"]["local"]
    assert 0 <= calls["run"]["served"] - calls["whole"]["served"] <= 4
    clips = [b for b in server.stats.bodies if len(b["messages"][-1]["content"]) == 4]
    assert clips, "the served model was shown three frames of each clip's stretch"
