"""Local vision-language model families proven on the CPU: for each, a tiny random model built
from the family's real config, model and processor classes (tiny_families.py) is asked through
the real gateway (family_checks.py): generation, option likelihoods (together as one by one, and as the model's own
`generate` scores the same tokens), two images in one message, a clip as video; a family that
cannot do one fails with a typed error that says so.

Processors with a video part (Qwen2-VL, Qwen2.5-VL, SmolVLM, LLaVA-OneVision, InternVL) need
torchvision even for images, and torchvision does not import beside the default venv's torch:
those families are built and proven in one script run in the venv that has the pair
(`torchvision_python`), started first so that it runs beside the in-process families."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
IN_PROCESS = ["idefics3", "gemma3", "paligemma2"]
WITH_TORCHVISION = ["qwen2_vl", "qwen2_5_vl", "smolvlm", "llava_onevision", "internvl"]
FAMILIES = IN_PROCESS + WITH_TORCHVISION
TAKES_VIDEO = set(WITH_TORCHVISION)
TIGHT = 2e-5  # float32 rounding between batch shapes; a misplaced position moves scores more


def _helper(name: str) -> Any:
    """A helper module beside this file (tests here are not a package)."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def proven(tmp_path_factory, torchvision_python) -> dict[str, dict[str, Any]]:
    """Every family's checks, by family: the torchvision ones in a subprocess that runs while
    the others are proven here."""
    root = tmp_path_factory.mktemp("families")
    env = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    script = subprocess.Popen(
        [str(torchvision_python), str(HERE / "family_checks.py"), str(root), *WITH_TORCHVISION],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        families, checks = _helper("tiny_families"), _helper("family_checks")
        results = {}
        for family in IN_PROCESS:
            folder = families.FAMILIES[family](root / family)
            results[family] = checks.prove(folder) | {"folder": str(folder)}
        out, err = script.communicate(timeout=600)
    finally:
        if script.poll() is None:
            script.kill()
    assert script.returncode == 0, err[-3000:]
    return results | json.loads(out.strip().splitlines()[-1])


def _check(proven: dict, family: str, name: str) -> dict[str, Any]:
    """One check's values; a crash (an untyped exception) fails with its traceback."""
    result = proven[family][name]
    assert "crash" not in result, result.get("traceback", result)
    return result


def _same_scores(result: dict[str, Any]) -> None:
    """Together as one by one (choice and numbers), and as the model's own `generate`."""
    assert result["best_together"] == result["best_alone"]
    asked = zip(result["alone"], result["together"], result["generated"], strict=True)
    for alone, together, generated in asked:
        assert together == pytest.approx(alone, abs=TIGHT)
        assert alone == pytest.approx(generated, abs=TIGHT)
        assert all(s < 0 for s in alone)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_generates_from_an_image(proven, family):
    result = _check(proven, family, "generate")
    assert "error" not in result, result
    assert 1 <= result["tokens_out"] <= 3 and result["again"] == result["text"]
    assert result["tokens_in"] > 5 + 4, "the image's tokens are in the prompt"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_ranks_options_by_likelihood(proven, family):
    result = _check(proven, family, "likelihood")
    assert "error" not in result, result
    assert result["n_tokens"] == [[1, 2], [1, 1, 1]]
    _same_scores(result)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_question_without_an_image(proven, family):
    """Scored right after an image's question: nothing of that prompt carries over (Qwen's
    RoPE offset did). PaliGemma's processor takes no prompt without an image, and says so."""
    result = _check(proven, family, "text_only")
    if family == "paligemma2":
        assert result["kind"] == "local_model_error" and "images` are expected" in result["said"]
        return
    assert "error" not in result, result
    _same_scores(result)
    assert result["tokens_in"] < _check(proven, family, "generate")["tokens_in"]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_takes_two_images_in_one_message(proven, family):
    result = _check(proven, family, "two_images")
    assert "error" not in result, result
    _same_scores(result)
    if family == "llava_onevision":  # one image gets anyres crops; each of several its base
        text = _check(proven, family, "text_only")["tokens_in"]  # 16 features and a newline
        assert result["tokens_in"] == text + 2 * (16 + 1)
    else:
        one = _check(proven, family, "generate")["tokens_in"]
        assert result["tokens_in"] > one + 1, "the second image's tokens are in the prompt too"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_takes_a_clip_as_video_or_says_it_cannot(proven, family):
    result = _check(proven, family, "video")
    if family not in TAKES_VIDEO:
        assert result["kind"] == "no_video" and "takes no videos" in result["said"]
        return
    assert "error" not in result, result
    assert result["tokens_in"] > result["text_only_tokens_in"] + 4, "the frames are in the prompt"
    assert 1 <= result["tokens_out"] <= 3
    assert result["together"] == pytest.approx(result["alone"], abs=TIGHT)
    assert result["alone"] == pytest.approx(result["generated"], abs=TIGHT)


def test_a_processor_that_needs_torchvision_says_so_where_it_is_missing(proven):
    """Where torchvision is missing (the default venv: none imports beside this torch) a Qwen2-VL
    folder fails to load with a sentence naming what is missing, not an ImportError from inside
    transformers; where it is installed, the same folder loads and answers."""
    from benchfoundry.gateway import Gateway, GenerateParams, ModelConfigError

    folder = proven["qwen2_vl"]["folder"]
    asked = (f"hf/{folder}", "what colour is it ?", GenerateParams(max_tokens=1))
    if importlib.util.find_spec("torchvision") is not None:
        assert Gateway().generate(*asked).text is not None
        return
    with pytest.raises(ModelConfigError, match="requires the Torchvision library"):
        Gateway().generate(*asked)
