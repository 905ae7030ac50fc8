"""The release's TSV in VLMEvalKit itself: its `CustomMCQDataset` loads the file from `$LMUData`,
resolves shared images and builds a prompt with the image and the options for every row. Runs
where `BENCHFOUNDRY_VLMEVALKIT` names a folder that makes `vlmeval` importable (a VLMEvalKit
checkout, or a folder its package and dependencies were installed into); VLMEvalKit is not a
dependency of the project (it pins and pulls in far more than publishing needs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.tasks.publish.test_publish import _options, publish
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture
from tests.tasks.publish.test_publish_clips import clip_release as clip_release  # noqa: F401

VLMEVALKIT = os.environ.get("BENCHFOUNDRY_VLMEVALKIT")

SCRIPT = """
import json, sys
from vlmeval.dataset.image_mcq import CustomMCQDataset
ds = CustomMCQDataset(dataset=sys.argv[1])
rows = []
for i in range(len(ds)):
    line = ds.data.iloc[i]
    msgs = ds.build_prompt(line)
    rows.append({"index": int(line["index"]), "answer": line["answer"],
                 "images": [m["value"] for m in msgs if m["type"] == "image"],
                 "text": [m["value"] for m in msgs if m["type"] == "text"][0]})
print(json.dumps(rows))
"""


@pytest.mark.skipif(not VLMEVALKIT, reason="set BENCHFOUNDRY_VLMEVALKIT to a folder with vlmeval")
def test_vlmevalkit_loads_the_tsv_as_a_custom_mcq_dataset(run, tmp_path):  # noqa: F811
    import pandas as pd
    from PIL import Image

    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    folder = tmp_path / "releases" / "bench" / summary.version
    lmu = tmp_path / "LMUData"
    lmu.mkdir()
    (lmu / "bench.tsv").write_bytes((folder / "bench.tsv").read_bytes())
    env = {**os.environ, "LMUData": str(lmu), "PYTHONPATH": VLMEVALKIT}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "bench"], env=env, capture_output=True, text=True,
        timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    parquet = pd.read_parquet(folder / "data").set_index("index")
    assert [r["index"] for r in rows] == sorted(parquet.index) and len(rows) == summary.rows
    for r in rows:
        expected = parquet.loc[r["index"]]
        assert r["answer"] == expected["answer"]
        for letter, option in zip("ABCD", expected["options"], strict=False):
            assert f"{letter}. {option}" in r["text"]
        (image,) = r["images"]
        assert Image.open(image).size == (96, 72)


@pytest.mark.skipif(not VLMEVALKIT, reason="set BENCHFOUNDRY_VLMEVALKIT to a folder with vlmeval")
def test_vlmevalkit_shows_a_clip_question_the_frames_of_its_stretch(clip_release, tmp_path):  # noqa: F811
    """A clip question's TSV row reaches the model as its stretch's keyframes, in time order."""
    import numpy as np
    import pandas as pd
    from PIL import Image

    _, folder = clip_release
    lmu = tmp_path / "LMUData"
    lmu.mkdir()
    (lmu / "clips.tsv").write_bytes((folder / "clips.tsv").read_bytes())
    env = {**os.environ, "LMUData": str(lmu), "PYTHONPATH": VLMEVALKIT}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "clips"], env=env, capture_output=True, text=True,
        timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    parquet = pd.read_parquet(folder / "data").set_index("index")
    assert sorted(r["index"] for r in rows) == sorted(parquet.index)
    for r in rows:
        frames = parquet.loc[r["index"]]["video_frames"]
        assert len(r["images"]) == len(frames) >= 3
        for shown, frame in zip(r["images"], frames, strict=True):
            assert np.array_equal(
                np.asarray(Image.open(shown)), np.asarray(Image.open(folder / frame))
            )
