"""The preflight checks every model a spec names before any stage runs."""

from __future__ import annotations

import socket

import pytest
import yaml

from benchfoundry.core.errors import UserError
from benchfoundry.devtools.testserver import Script, TestServer
from benchfoundry.pipeline.preflight import PreflightError, check_or_raise, preflight
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.pipeline.spec import load_spec

SECRET = "s3cret-preflight"


@pytest.fixture
def no_openai(monkeypatch):
    """No key and no base URL from the environment: a spec must say where to call."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def write_spec(tmp_path):
    def write(models: dict[str, list[str]] | None = None, **fields: object):
        raw: dict[str, object] = {"name": "pf", "sources": [{"kind": "packaged"}], **fields}
        if models is not None:
            raw["models"] = models
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(raw), encoding="utf-8")
        return StageRun.from_spec(load_spec(path), str(tmp_path / "run"))

    return write


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_missing_key_fails_naming_the_model_and_the_key(no_openai, write_spec):
    spec = write_spec({"generator": ["openai/gpt-4o-mini"]})
    with pytest.raises(PreflightError) as raised:
        check_or_raise(spec)
    message = str(raised.value)
    assert isinstance(raised.value, UserError) and "\n" not in message
    assert message.startswith("preflight: 1 problem: openai/gpt-4o-mini (models.generator): ")
    assert "OPENAI_API_KEY" in message
    # A stage that does not ask the generator is not held up by it.
    assert preflight(spec, ["ingest", "extract"]).ok


def test_with_the_key_set_it_passes(no_openai, monkeypatch, write_spec):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-preflight-0123456789")
    report = check_or_raise(write_spec({"generator": ["gpt-4o-mini", "openai/gpt-4o-mini"]}))
    assert report.ok
    # Generate asks a role's first model only: the second is not held against the build.
    assert {r.name: r.where for r in report.results if r.provider == "openai"} == {
        "gpt-4o-mini": ["models.generator"]
    }


def test_only_what_the_stages_will_call_is_checked(no_openai, tmp_path, write_spec):
    from benchfoundry.tasks.extract.options import ExtractOptions
    from benchfoundry.tasks.generate.options import GenerateOptions

    # Generation without an LLM asks no generator: a keyless one does not block the build.
    stage = write_spec({"generator": ["openai/gpt-4o-mini"]})
    off = stage.options.model_copy(update={"generate": GenerateOptions(llm=False)})
    assert preflight(stage.model_copy(update={"options": off})).ok
    # Local weights the extractors will load are checked; a missing SAM checkpoint is named.
    sam = ExtractOptions(segmenter="sam", segmenter_checkpoint=str(tmp_path / "sam_vit_b.pth"))
    options = stage.options.model_copy(
        update={"extract": sam, "generate": GenerateOptions(llm=False)}
    )
    report = preflight(stage.model_copy(update={"options": options}))
    (problem,) = report.problems
    assert problem.where == ["options.extract.segmenter_checkpoint"]
    assert "not found" in problem.problem
    (tmp_path / "sam_vit_b.pth").write_bytes(b"weights")
    assert preflight(stage.model_copy(update={"options": options})).ok
    # The qc command's group is its steps: the text-only role is checked for it.
    keyless = write_spec({"text_only": ["openai/gpt-4o-mini"]})
    assert [p.where for p in preflight(keyless, ["qc"]).problems] == [["models.text_only"]]


def test_embedded_defaults_pass(no_openai, write_spec):
    report = preflight(write_spec())
    assert report.ok, report.text()
    where = {r.name: r.where for r in report.results}
    assert where["smollm2"] == ["models.text_only (default)"]
    assert where["facts-smollm2"] == ["models.vlm (default)"]
    assert where["blind/longest"] == ["options.filter.blind"]
    assert where["blind/random"] == ["options.filter.chance"]
    assert report.text().startswith("preflight: ")


def test_options_sections_count_for_their_stages(no_openai, write_spec):
    spec = write_spec(
        options={
            "extract": {"captioner": "vlm", "captioner_model": "hf//nope/weights"},
            "evaluate": {"models": ["blind/no-such-kind"], "judge": "openai/gpt-4o"},
        }
    )
    report = preflight(spec)
    lines = report.text().splitlines()
    assert lines[0] == (
        "hf//nope/weights (options.extract.captioner_model): local weights not found at "
        "/nope/weights"
    )
    assert lines[1].startswith("blind/no-such-kind (options.evaluate.models): unknown blind")
    assert lines[2].startswith("openai/gpt-4o (options.evaluate.judge): no API key")
    assert len(lines) == 3
    assert preflight(spec, ["ingest", "generate", "filter", "consensus"]).ok


def test_a_secret_in_a_base_url_never_appears(no_openai, write_spec):
    port = _closed_port()
    name = f"openai/gpt-4o-mini@http://user:{SECRET}@127.0.0.1:{port}/v1"
    spec = write_spec({"generator": [name], "judge": [f"facts/{name}"]})
    assert preflight(spec).ok  # a base URL needs no key
    report = preflight(spec, reach=True)
    assert not report.ok
    with pytest.raises(PreflightError) as raised:
        check_or_raise(spec, reach=True)
    for text in (report.text(), report.model_dump_json(), str(raised.value)):
        assert SECRET not in text and "user:" not in text
    assert f"openai/gpt-4o-mini@http://***@127.0.0.1:{port}/v1 (models.generator)" in str(
        raised.value
    )


def test_reach_calls_each_endpoint_once(no_openai, write_spec):
    script = Script(default="OK")
    with TestServer(script) as server:
        spec = write_spec({"generator": [f"openai/scripted@{server.base_url}"]})
        report = check_or_raise(spec, ["generate"], reach=True)
        assert server.stats.requests == 1
    assert report.ok
    [result] = report.results
    assert result.latency_s is not None and result.latency_s < 15
    assert "1 reached" in report.text()


def test_reach_fails_on_a_closed_port_naming_the_model(no_openai, write_spec):
    name = f"openai/scripted@http://127.0.0.1:{_closed_port()}/v1"
    spec = write_spec({"generator": [name]})
    assert preflight(spec).ok
    with pytest.raises(PreflightError) as raised:
        check_or_raise(spec, ["generate"], reach=True)
    assert f"{name} (models.generator): not reached at http://127.0.0.1:" in str(raised.value)
    assert "connection" in str(raised.value) and "is the server running" in str(raised.value)
