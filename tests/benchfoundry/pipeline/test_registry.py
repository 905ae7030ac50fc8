"""The stage registry: every entry's entry point and flow exist and agree with the spec's options,
the CLI lists it, and the mappers give results in job order in place or as Prefect tasks."""

import inspect
import json
import time

import pytest
from prefect import flow
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.batches import INLINE
from benchfoundry.pipeline.registry import STAGES, PrefectMapper, StageOptions, StageRun


def test_every_entry_resolves_to_its_entry_point_flow_and_options():
    defaults = StageOptions()
    for name, entry in STAGES.items():
        run = entry.flow_function()
        assert run.name == name or entry.group, name
        assert list(inspect.signature(run.fn).parameters)[0] == "stage"
        assert isinstance(entry.stage_options(defaults), entry.options_type())
        module, _, function = entry.entry.partition(":")
        assert module.startswith("benchfoundry.tasks.") and callable(
            getattr(__import__(module, fromlist=[function]), function)
        )
    assert set(StageOptions.model_fields) == set(STAGES)


def test_the_stages_command_lists_the_registry():
    result = CliRunner().invoke(app, ["stages", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)["stages"]
    assert [s["name"] for s in listed] == list(STAGES)
    ingest = listed[0]
    assert ingest["options"] == "benchfoundry.tasks.ingest.options.IngestOptions"
    assert "images" in ingest["outputs"] and ingest["inputs"] == ["spec:sources"]
    text = CliRunner().invoke(app, ["stages"]).stdout
    assert "select (in `qc`)" in text and "writes  scored" in text


def test_a_spec_names_only_registered_stages(tmp_path):
    from benchfoundry.pipeline.spec import SpecError, load_spec

    spec = tmp_path / "s.yaml"
    spec.write_text("name: s\nsources: [{kind: packaged}]\nstages: [ingest, report]\n")
    with pytest.raises(SpecError, match=r"\['report'\] are not available.*ingest, extract"):
        load_spec(spec)
    spec.write_text("name: s\nsources: [{kind: packaged}]\n")
    assert load_spec(spec).stages == list(STAGES)


def _slow_square(x: int) -> int:
    time.sleep(0.05 * (5 - x))  # later jobs finish first
    return x * x


def test_mappers_yield_in_job_order(prefect_api):
    jobs = [((x,), 1) for x in range(5)]
    assert list(INLINE.map(_slow_square, jobs, label="squares")) == [0, 1, 4, 9, 16]

    @flow
    def squares() -> list[int]:
        return list(PrefectMapper().map(_slow_square, jobs, label="squares", ahead=3))

    assert squares() == [0, 1, 4, 9, 16]


def test_stage_run_from_parts_and_from_a_spec(tmp_path):
    from benchfoundry.pipeline.spec import load_spec
    from benchfoundry.tasks.extract.options import ExtractOptions

    made = StageRun.make(tmp_path, extract=ExtractOptions(batch_size=3))
    assert made.run == str(tmp_path) and made.options.extract.batch_size == 3
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nsources: [{kind: packaged}]\nmodels: {text_only: [blind/longest]}\n"
        "runner: {kind: dask, workers: 2}\n"
    )
    loaded = load_spec(spec)
    context = StageRun.from_spec(loaded, str(tmp_path / "run"))
    assert context.models == {"text_only": ["blind/longest"]} and context.stages == list(STAGES)
    assert StageRun.model_validate_json(context.model_dump_json()) == context  # a plain value
    assert loaded.runner.kind == "dask" and loaded.runner.workers == 2


def test_a_runner_address_needs_the_dask_or_ray_kind(tmp_path):
    from benchfoundry.pipeline.spec import SpecError, load_spec

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nsources: [{kind: packaged}]\nrunner: {kind: thread, address: 'tcp://h:8786'}\n"
    )
    with pytest.raises(SpecError, match="runner.address names a Dask scheduler or a Ray cluster"):
        load_spec(spec)
    for runner in ("{kind: ray}", "{kind: ray, address: 'ray://h:10001'}", "{kind: dask}"):
        spec.write_text(f"name: s\nsources: [{{kind: packaged}}]\nrunner: {runner}\n")
        assert load_spec(spec).runner.kind in ("ray", "dask")
    spec.write_text("name: s\nsources: [{kind: packaged}]\nrunner: {kind: spark}\n")
    with pytest.raises(SpecError, match="runner"):
        load_spec(spec)


def test_a_stage_run_from_the_manifest_resolves_masked_models_to_their_real_endpoints(tmp_path):
    """The manifest names a model whose URL carries credentials masked; a fresh process (a
    worker running the evaluation a release triggers) that takes the stage from the manifest
    reaches the real endpoint, read again from the spec file the build used."""
    import subprocess
    import sys

    from benchfoundry.core.ids import content_hash
    from benchfoundry.pipeline.spec import load_spec
    from benchfoundry.storage.tables import RunFolder

    secret = "pw-" + "5e1f" * 4
    (tmp_path / "images").mkdir()
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(
        "name: masked\nsources: [{kind: folder, path: images}]\n"
        f"models: {{vlm: ['openai/m@http://user:{secret}@127.0.0.1:9/v1']}}\n"
        "options: {evaluate: {models: [blind/random]}}\noutput: run\n",
        encoding="utf-8",
    )
    spec = load_spec(spec_path)
    spec_json = spec.model_dump(mode="json")
    run = RunFolder(tmp_path / "run")
    run.root.mkdir()
    run.update_manifest(
        "build",
        {"spec_path": str(spec_path), "spec": spec_json,
         "spec_hash": content_hash(spec_json, length=16), "stages": ["evaluate"]},
    )  # fmt: skip
    assert secret not in run.manifest_path.read_text(encoding="utf-8")
    probe = (
        "import sys\n"
        "from benchfoundry.pipeline.spec import stage_from_build\n"
        "from benchfoundry.gateway.models import parse_model\n"
        "stage = stage_from_build(sys.argv[1], 'evaluate')\n"
        "(name,) = stage.models['vlm']\n"
        "print(sys.argv[2] not in name, sys.argv[2] in (parse_model(name).base_url or ''))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(run.root), secret], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"], "masked in the name, real on the wire"
    spec_path.unlink()  # gone: the masked name cannot reach its endpoint, and says why
    done = subprocess.run(
        [sys.executable, "-c", probe, str(run.root), secret], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode != 0 and "credentials are masked" in done.stderr
    assert secret not in done.stderr + done.stdout
