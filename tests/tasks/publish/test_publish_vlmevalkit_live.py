"""The release's TSV in VLMEvalKit itself: its `CustomMCQDataset` loads the file from `$LMUData`,
resolves shared images and builds a prompt with the image and the options for every row.

VLMEvalKit is not on the package index and not a dependency of the project (it pins and pulls in
far more than publishing needs). Its source at a pinned commit is `../shared/third_party/
vlmevalkit-e8e78f0.tgz` beside the checkout (its README there); the first run on a machine
unpacks it into `~/.cache/benchfoundry/vlmevalkit-<its sha256's first 16 digits>/` and makes
`~/.cache/benchfoundry/venv-vlmevalkit`, a venv over the torchvision venv (`torchvision_python`:
torch 2.14.1 and torchvision 0.29.1, its numpy and pillow, used from there, not copied) with what
importing `vlmeval.dataset.image_mcq` needs and nothing else (the module-level imports of
`vlmeval/dataset/__init__.py`, which imports every dataset module: `decord` at the top of
`stibench.py`, `transformers`, `datasets`, `cv2` and so on). The scripts run with that venv's
python and `PYTHONPATH` at the unpacked source; the venv does not see the project's venv (pip
would count its packages as installed and a change there would break this one unseen), so
pandas and the other packages the project has are installed into it too. Measured on
2026-12-07 (2 CPU cores, shared with other work, load about 5): the venv (1.2 GB) took 3 min 10 s
to build from the registry over an existing torchvision venv, 74 s again with pip's cache warm;
once it exists the two tests take 30 s and 10 s (importing `vlmeval.dataset.image_mcq` takes 10
to 20 s of each; the first also publishes), besides their fixtures' 13 s and 10 s.

`BENCHFOUNDRY_VLMEVALKIT` names another folder to put on `PYTHONPATH` instead of the unpacked
archive (a VLMEvalKit checkout at another commit; packages installed into that folder come before
the venv's). Without the archive (a checkout with no `../shared/`) the tests skip, and fail under
`CI=true`; they skip where the registry cannot be reached to make the venv. `decord` 0.6.0
installs from a `py3-none-manylinux2010_x86_64` wheel; there is none for Linux on aarch64, where
the venv cannot be built."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from benchfoundry.devtools.cached_venv import (
    RegistryUnreachable,
    build_once,
    cache_root,
    cached_venv,
)
from tests.tasks.publish.test_publish import _options, publish
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture
from tests.tasks.publish.test_publish_clips import clip_release as clip_release  # noqa: F401

REPO = Path(__file__).resolve().parents[3]
ARCHIVE = REPO.parent / "shared" / "third_party" / "vlmevalkit-e8e78f0.tgz"
# What `import vlmeval.dataset.image_mcq` needs beside torch and torchvision (found by importing
# it in a venv over the torchvision venv until it imported; every one of them is imported then),
# with the bounds VLMEvalKit's requirements.txt sets; OpenCV as the headless build the project
# uses (VLMEvalKit lists `opencv-python`).
PINS = [
    "tabulate", "termcolor", "validators", "sty", "portalocker", "timeout-decorator",
    "levenshtein>=0.27.1", "decord>=0.6.0", "jieba>=0.42.1", "nltk", "rouge", "math-verify",
    "pylatexenc==2.10", "rouge-score", "json-repair", "qwen-vl-utils",
    "pandas", "huggingface-hub", "openai", "datasets", "opencv-python-headless", "imageio",
    "scipy", "num2words", "scikit-learn", "transformers", "accelerate",
]  # fmt: skip
# The first run on a machine unpacks the source and builds the venv (about 3 minutes over the
# torchvision venv, which itself takes about 80 s where it is not there yet).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

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


def _unpacked(archive: Path) -> Path:
    """The archive's files in the cache, unpacked once per machine and archive (by its hash)."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()

    def unpack(folder: Path) -> None:
        folder.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")

    return build_once(cache_root() / f"vlmevalkit-{digest[:16]}", digest, unpack)


@pytest.fixture(scope="session")
def vlmevalkit(request) -> tuple[Path, str]:
    """(the venv's python, the folder that makes `vlmeval` importable); the torchvision venv is
    asked for only once there is a source to run."""
    if override := os.environ.get("BENCHFOUNDRY_VLMEVALKIT"):
        source = override
    elif ARCHIVE.exists():
        source = str(_unpacked(ARCHIVE))
    else:
        reason = f"no VLMEvalKit source: {ARCHIVE} is missing (see its README in shared/)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    torchvision_venv = request.getfixturevalue("torchvision_python").parent.parent
    try:
        venv = cached_venv("venv-vlmevalkit", PINS, beneath=torchvision_venv, timeout_s=1200)
    except RegistryUnreachable as exc:
        pytest.skip(
            f"VLMEvalKit's packages cannot be installed: the registry cannot be reached ({exc})"
        )
    return venv / "bin" / "python", source


def _load(vlmevalkit: tuple[Path, str], lmu: Path, name: str, cwd: Path) -> list[dict]:
    """The rows of `$LMUData/<name>.tsv` as VLMEvalKit's `CustomMCQDataset` reads them and
    builds their prompts."""
    python, source = vlmevalkit
    env = {**os.environ, "LMUData": str(lmu), "PYTHONPATH": source}
    done = subprocess.run(
        [str(python), "-c", SCRIPT, name], env=env, capture_output=True, text=True,
        timeout=300, check=False, cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_vlmevalkit_loads_the_tsv_as_a_custom_mcq_dataset(run, tmp_path, vlmevalkit):  # noqa: F811
    """Every row of the release's TSV comes out of VLMEvalKit with its key, its options lettered
    in the prompt and its image decoded to a file of the image's size."""
    import pandas as pd
    from PIL import Image

    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    folder = tmp_path / "releases" / "bench" / summary.version
    lmu = tmp_path / "LMUData"
    lmu.mkdir()
    (lmu / "bench.tsv").write_bytes((folder / "bench.tsv").read_bytes())
    rows = _load(vlmevalkit, lmu, "bench", tmp_path)
    parquet = pd.read_parquet(folder / "data").set_index("index")
    assert [r["index"] for r in rows] == sorted(parquet.index) and len(rows) == summary.rows
    for r in rows:
        expected = parquet.loc[r["index"]]
        assert r["answer"] == expected["answer"]
        for letter, option in zip("ABCD", expected["options"], strict=False):
            assert f"{letter}. {option}" in r["text"]
        (image,) = r["images"]
        assert Image.open(image).size == (96, 72)


def test_vlmevalkit_shows_a_clip_question_the_frames_of_its_stretch(
    clip_release, tmp_path, vlmevalkit,  # noqa: F811
):  # fmt: skip
    """A clip question's TSV row reaches the model as its stretch's keyframes, in time order."""
    import numpy as np
    import pandas as pd
    from PIL import Image

    _, folder = clip_release
    lmu = tmp_path / "LMUData"
    lmu.mkdir()
    (lmu / "clips.tsv").write_bytes((folder / "clips.tsv").read_bytes())
    rows = _load(vlmevalkit, lmu, "clips", tmp_path)
    parquet = pd.read_parquet(folder / "data").set_index("index")
    assert sorted(r["index"] for r in rows) == sorted(parquet.index)
    for r in rows:
        frames = parquet.loc[r["index"]]["video_frames"]
        assert len(r["images"]) == len(frames) >= 3
        for shown, frame in zip(r["images"], frames, strict=True):
            assert np.array_equal(
                np.asarray(Image.open(shown)), np.asarray(Image.open(folder / frame))
            )
