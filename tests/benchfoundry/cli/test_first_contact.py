"""A newcomer's everyday mistakes, each through the command line as a process: a misspelt key,
an unknown model name, a run folder given as a dataset, a missing source, a benchmark's folder
given to `releases`, a run folder that does not exist. Each gets a precise answer, before
Prefect's server is started (no `prefect.db` appears in the Prefect home)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def cli(tmp_path):
    home = tmp_path / "prefect-home"
    home.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
        env.update(
            PREFECT_HOME=str(home), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false"
        )
        done = subprocess.run(
            [sys.executable, "-m", "benchfoundry", *args],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert not (home / "prefect.db").exists(), "the error came after Prefect started"
        return done

    return run


def _spec(folder: Path, text: str) -> Path:
    path = folder / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_misspelt_option_names_the_key_meant_and_every_key_of_its_section(cli, tmp_path):
    (tmp_path / "imgs").mkdir()
    spec = _spec(
        tmp_path,
        "name: mine\nsources: [{kind: folder, path: imgs}]\nstages: [ingest, extract, generate]\n"
        "options:\n  generate: {llm: false, n_option: 4}\n",
    )
    done = cli("build", str(spec))
    assert done.returncode != 0
    assert "options.generate.n_option: unknown key; did you mean `n_options`?" in done.stderr
    assert "The keys of options.generate: templates, llm," in done.stderr


def test_an_unknown_model_offers_the_close_names_and_says_it_came_from_model(cli, tmp_path):
    done = cli("evaluate", "--out", "ev", "--dataset", str(tmp_path), "--model", "blind-randum")
    assert done.returncode != 0
    assert "--model blind-randum" in done.stderr and "did you mean blind-random" in done.stderr
    assert "facts-smollm2-objects" in done.stderr and "benchfoundry models" in done.stderr
    assert "options.evaluate.models" not in done.stderr


def test_a_run_folder_given_as_a_dataset_is_said_to_be_one_with_its_release(cli, tmp_path):
    from benchfoundry.storage.tables import RunFolder

    run = RunFolder(tmp_path / "runs" / "demo")
    run.root.mkdir(parents=True)
    run.update_manifest("ingest", {"summary": {}})
    release = str(tmp_path / "releases" / "demo" / "abc123")
    run.update_manifest("publish", {"summary": {"release": release}})
    done = cli("evaluate", "--out", "ev", "--dataset", str(run.root), "--model", "blind-random")
    assert done.returncode != 0
    assert "is a build's run folder, not a release" in done.stderr and release in done.stderr
    done = cli("evaluate", "--out", "ev", "--dataset", str(tmp_path / "nothing"), "--model", "x/y")
    assert "no dataset at" in done.stderr
    done = cli("evaluate", "--out", "ev", "--dataset", str(run.root))
    assert "name the models to evaluate: --model NAME" in done.stderr


def test_the_preflight_checks_sources_and_a_spec_without_output_runs_under_its_name(cli, tmp_path):
    spec = _spec(tmp_path, "name: mine\nsources: [{kind: folder, path: no-such-folder}]\n")
    done = cli("build", str(spec), "--check")
    assert done.returncode == 1
    assert "no folder at" in done.stdout + done.stderr
    assert not (tmp_path / "runs").exists()
    done = cli("build", str(spec))
    assert done.returncode != 0 and "no folder at" in done.stderr
    assert not (tmp_path / "runs").exists(), "a build that fails before a stage leaves nothing"
    (tmp_path / "pictures").mkdir()
    Image.new("RGB", (64, 64), (0, 0, 255)).save(tmp_path / "pictures" / "a.png")
    (tmp_path / "table.tsv").write_text("index\tquestion\n", encoding="utf-8")
    spec = _spec(
        tmp_path,
        "name: mine\nsources: [{kind: folder, path: pictures}, {kind: folder, path: table.tsv}]\n",
    )
    done = cli("build", str(spec), "--check", "--json")
    assert done.returncode == 1
    assert "is a file, but a `folder` source names a folder" in done.stdout
    from benchfoundry.pipeline.spec import load_spec

    assert Path(load_spec(spec).output) == (tmp_path / "runs" / "mine").resolve()
    # A folder with no image in it stops the build before it starts, saying what it holds.
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("x", encoding="utf-8")
    (tmp_path / "notes" / ".hidden").mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "notes" / ".hidden" / "a.png")
    for folder, said in (
        ("empty", "is empty"),
        ("notes", "holds no image file (1 other files: readme.txt)"),
    ):
        spec = _spec(tmp_path, f"name: none\nsources: [{{kind: folder, path: {folder}}}]\n")
        done = cli("build", str(spec))
        assert done.returncode == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "runs" / "none").exists()


def test_releases_takes_a_benchmarks_folder_and_status_tells_a_failed_build(cli, tmp_path):
    version = tmp_path / "releases" / "demo" / "v1"
    version.mkdir(parents=True)
    manifest = {"version": "v1", "created_at": "2026-12-04T00:00:00", "rows": 3}
    (version / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "releases" / "demo" / "latest").write_text("v1\n", encoding="utf-8")
    for where in ("releases", "releases/demo", "releases/demo/v1"):
        done = cli("releases", "--to", str(tmp_path / where), "--json")
        assert done.returncode == 0, done.stderr
        assert [r["version"] for r in json.loads(done.stdout)["releases"]] == ["v1"], where

    from benchfoundry.flows.build import record_failure
    from benchfoundry.storage.tables import RunFolder

    run = RunFolder(tmp_path / "runs" / "broken")
    run.root.mkdir(parents=True)
    record_failure(run, "extract", RuntimeError("key sk-abc123 rejected\ntraceback"))
    done = cli("status", "--out", str(run.root))
    assert "the last build FAILED in extract" in done.stdout and "RuntimeError" in done.stdout
    done = cli("review", "serve", "--out", str(tmp_path / "runs" / "nowhere"))
    assert done.returncode != 0 and "does not exist" in done.stderr


def test_the_check_finds_a_stage_that_would_read_what_no_earlier_stage_writes(cli, tmp_path):
    """`build --check` fails at once where the build would fail only when translate starts:
    its items are quality control's selection, and this build does not select."""
    (tmp_path / "pictures").mkdir()
    Image.new("RGB", (64, 64), (0, 0, 255)).save(tmp_path / "pictures" / "a.png")
    head = "name: order\nsources: [{kind: folder, path: pictures}]\n"
    spec = _spec(tmp_path, head + "stages: [ingest, extract, generate, translate]\n")
    done = cli("build", str(spec), "--check")
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert "translate (options.translate.include): reads `scored`, which select writes" in said
    spec = _spec(
        tmp_path,
        head + "stages: [ingest, extract, generate, translate]\n"
        "options: {translate: {include: all}}\n",
    )
    assert cli("build", str(spec), "--check").returncode == 0


def test_a_release_given_where_a_run_folder_goes_is_said_to_be_one(cli, tmp_path):
    version = tmp_path / "releases" / "demo" / "v1"
    (version / "data").mkdir(parents=True)
    manifest = {"name": "demo", "version": "v1", "files": {}, "spec": {"output": "runs/demo"}}
    (version / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (version.parent / "latest").write_text("v1\n", encoding="utf-8")
    for out in (version, version.parent):
        for command in (["review", "serve"], ["review", "status"], ["review", "export"]):
            done = cli(*command, "--out", str(out))
            assert done.returncode == 1, command
            assert "is the published release demo v1, not a run folder" in done.stderr
            assert "its build spec's output: runs/demo" in done.stderr
