"""Questions on a video in review's hand-offs: Label Studio tasks carry the clip for its Video
player, with the stretch asked about."""

import base64
import json
import xml.etree.ElementTree as ET

from benchfoundry.core.records import CandidateRecord, ClipRecord, ReviewBatchRecord, ScoredRecord
from benchfoundry.devtools.synthetic_video import write_clips
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.models import VideoSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.generate.options import GenerateOptions
from benchfoundry.tasks.generate.stage import generate_all
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.stage import run as ingest
from benchfoundry.tasks.review.options import Reviewer, ReviewOptions
from benchfoundry.tasks.review.stage import export_batches
from tests.tasks.review.conftest import labelstudio_export


def test_label_studio_tasks_of_clip_questions_carry_the_clip(tmp_path, scored_record):
    write_clips(tmp_path / "corpus", 0, 1, seed=2)
    folder = tmp_path / "corpus" / "procedures"
    run = RunFolder(tmp_path / "run")
    source = VideoSource(path=folder, annotations=folder / "segments.csv")
    ingest(StageRun.make(run, sources=[source], ingest=IngestOptions(keyframes=2)))
    generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    recognition = [
        c for c in run.table(CandidateRecord).records() if c.dimension == "action_recognition"
    ]
    run.table(ScoredRecord).append(
        [scored_record(c.question_id, c.image_id, dimension=c.dimension) for c in recognition]
    )
    export_batches(str(run.root), ReviewOptions(reviewers=[Reviewer(name="alice")]), "s")
    (batch,) = run.table(ReviewBatchRecord).records()
    to = tmp_path / "ls" / "tasks.json"
    tasks = labelstudio_export(run, batch.batch_id, to)
    config = ET.fromstring((to.parent / "label_config.xml").read_text())
    assert [v.get("value") for v in config.iter("Video")] == ["$video"]
    # a move offers the taxonomy's video dimensions only (one configuration for the batch)
    (moves,) = (c for c in config.iter("Choices") if c.get("name") == "dimension")
    assert [c.get("value") for c in moves] == [
        "action_prediction", "action_recognition", "procedure_understanding"
    ]  # fmt: skip
    (clip,) = run.table(ClipRecord).records()
    assert len(tasks) == len(recognition)
    by_id = {c.question_id: c for c in recognition}
    for task in tasks:
        data = task["data"]
        media, encoded = data["video"].split(";base64,")
        assert media == "data:video/mp4" and base64.b64decode(encoded) == clip.bytes
        meta = by_id[data["question_id"]].meta
        assert data["stretch"] == f"{meta['video']}: {meta['start']} to {meta['end']} s asked about"


def test_a_batch_shows_each_items_chinese_twin_beside_it_escaped(run, serve_app):
    """The desk and the API show the translate stage's twin under the English item, its key
    marked, its text escaped like everything else from data."""
    import urllib.request

    from benchfoundry.core.records import TranslationRecord
    from benchfoundry.tasks.review.app import create_app

    english = {c.question_id: c for c in run.table(CandidateRecord).records()}
    run.table(TranslationRecord).append(
        [
            TranslationRecord(
                question_id="q1", language="zh", question="图中写的是<b>什么</b>？",
                options=[f"选项{i}" for i in range(len(english["q1"].options))], hint=None,
                answer=english["q1"].answer, method="llm:translator", checks=["option_count"],
            )
        ]
    )  # fmt: skip
    url = serve_app(create_app(run.root))
    (batch,) = run.table(ReviewBatchRecord).records()
    headers = {"Authorization": "Bearer ann-token-for-the-review-tests-0123456789"}
    request = urllib.request.Request(f"{url}/api/batches/{batch.batch_id}", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        samples = {s["question_id"]: s for s in json.loads(response.read())["samples"]}
    (twin,) = samples["q1"]["twins"]
    assert twin["language"] == "zh" and twin["question"] == "图中写的是<b>什么</b>？"
    assert samples["q0"]["twins"] == []
    request = urllib.request.Request(f"{url}/batches/{batch.batch_id}", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        page = response.read().decode()
    assert 'class="twin" lang="zh"' in page and "图中写的是&lt;b&gt;什么&lt;/b&gt;？" in page
    assert "<b>什么</b>" not in page
