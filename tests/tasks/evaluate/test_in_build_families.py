"""Model families for `in_build`: a model of a builder's family (glob patterns, matched without
regard to case on the name, the model id or provider/model id) is marked with the role said to
be by family, beside the exact matches; a chance baseline is never marked, not even by a
pattern that matches everything; the spec's option and the command's flag."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.devtools.testserver import TestServer
from benchfoundry.gateway.assemble import default_catalogue
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.tasks.evaluate.in_build import InBuild, biased_sentence, build_roles, mark
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from tests.tasks.evaluate.test_evaluate import evaluate, scripted
from tests.tasks.evaluate.test_in_build import write_release
from tests.tasks.publish.test_publish import _options
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture (a reviewed run)


def _labels(roles):
    return [r.label() for r in roles]


FAMILIES = {"qwen": ["qwen*", "Qwen/*"], "llama": ["*llama*"], "everything": ["*"]}


@pytest.fixture
def built(tmp_path):
    spec = {
        "stages": ["generate", "filter", "consensus", "publish"],
        "models": {
            "generator": ["openai/Qwen2.5-72B-Instruct@http://gen:8000/v1"],
            "text_only": ["openai/llama-3-8b"],
            "vlm": ["hf/Qwen/Qwen2-VL-2B-Instruct"],
            "judge": ["openai/gpt-4o"],
        },
        "options": {"filter": {"blind": ["blind/longest"], "chance": ["blind/random"]}},
    }
    write_release(tmp_path, spec, [{"meta_info": {"generator": "template:x"}, "reviewers": []}])
    return build_roles(tmp_path)


def test_exact_and_family_matches(built):
    catalogue = default_catalogue(None)
    evaluated = [
        "openai/Qwen2.5-72B-Instruct@http://other:9000/v1",  # the generator, elsewhere
        "openai/QWEN2.5-VL-7B@http://x/v1",  # the family, in capitals
        "hf/Qwen/Qwen2.5-VL-3B-Instruct",  # the family by its hub organisation
        "openai/Meta-Llama-3.1-70B",
        "openai/gpt-4o",
        "openai/mistral-large",
    ]
    found = mark(evaluated, built, catalogue, {k: FAMILIES[k] for k in ("qwen", "llama")})
    assert _labels(found[evaluated[0]]) == [
        "generator",
        "vision-language ensemble (same family: qwen)",
    ]
    assert _labels(found[evaluated[1]]) == [
        "generator (same family: qwen)",
        "vision-language ensemble (same family: qwen)",
    ]
    assert found[evaluated[2]] == found[evaluated[1]]
    assert _labels(found["openai/Meta-Llama-3.1-70B"]) == ["text-only filter (same family: llama)"]
    assert _labels(found["openai/gpt-4o"]) == ["judge"], "exact, and in no family"
    assert _labels(found["openai/mistral-large"]) == []
    assert mark(evaluated, built, catalogue)[evaluated[1]] == [], "no families: exact only"


def test_chance_baselines_are_never_marked(built):
    catalogue = default_catalogue(None)
    baselines = ["blind/random", "blind-random", "blind/letter-A", "blind/frequent"]
    found = mark([*baselines, "blind-longest", "openai/mistral"], built, catalogue, FAMILIES)
    assert all(_labels(found[b]) == [] for b in baselines)
    # a counted blind baseline keeps its exact role, and gains none by family
    assert _labels(found["blind-longest"]) == ["text-only filter"]
    # a pattern that matches everything puts every model that is not blind in one family
    assert _labels(found["openai/mistral"]) == [
        "generator (same family: everything)",
        "text-only filter (same family: everything)",
        "vision-language ensemble (same family: everything)",
        "judge (same family: everything)",
    ]


def test_the_sentence_says_by_family():
    kin = InBuild(role="generator", family="qwen", bias="upward")
    by_family = biased_sentence("m", [kin], "bench v1")
    assert by_family.startswith("m is of the family of models that built bench v1")
    assert "biased upward" in by_family
    both = biased_sentence("m", [kin, InBuild(role="vlm", bias="upward")], "bench v1")
    assert both.startswith("m took part in building bench v1") and "biased upward" in both
    judged = biased_sentence("m", [kin, InBuild(role="judge", bias="unclear")], "bench v1")
    assert judged.endswith("biased upward."), "a role of unknown direction does not cancel one"


def test_a_release_builders_family_is_marked(run, tmp_path):  # noqa: F811  (the fixture)
    with TestServer(scripted()) as server:
        builder = f"openai/good@{server.base_url}"
        cousin = f"openai/Good-v2@{server.base_url}"
        held_out = f"openai/other@{server.base_url}"
        stage = StageRun.make(run, publish=_options(tmp_path, letter_tolerance=0.5))
        stage.name = "bench"
        stage.models = {"vlm": [builder], "text_only": ["smollm2"]}
        STAGES["publish"].run(stage)
        release = tmp_path / "releases" / "bench"
        models = [builder, cousin, held_out, "blind-random"]
        families = {"good": ["good*"]}
        summary = evaluate(tmp_path / "eval", release, models, mode="vanilla", families=families)
    marked = {s.model: _labels(s.in_build) for s in summary.scores}
    assert marked == {
        builder: ["vision-language ensemble"],
        cousin: ["vision-language ensemble (same family: good)"],
        held_out: [],
        "blind-random": [],
    }
    text = "\n".join(summary.lines())
    assert f"{cousin} is of the family of models that built bench" in text
    assert f"{builder} took part in building bench" in text
    assert "vision-language ensemble (same family: good)" in summary.markdown()


def test_the_option_and_the_flag(tmp_path):
    assert EvaluateOptions(families={"qwen": ["qwen*"]}).families == {"qwen": ["qwen*"]}
    with pytest.raises(ValueError, match="at least one non-empty pattern"):
        EvaluateOptions(families={"qwen": []})
    result = CliRunner().invoke(
        app,
        ["evaluate", "--out", str(tmp_path / "run"), "--model", "blind-random", "--family", "qwen"],
    )
    assert result.exit_code != 0 and "give NAME=PATTERN[,PATTERN]" in result.output
