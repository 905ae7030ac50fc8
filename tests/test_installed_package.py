"""The package as a user installs it: the wheel built from this checkout, installed into a fresh
virtual environment, run from a folder outside the source tree. Prompts, taxonomies, the model
catalogue and the demo corpus come from the installed package's data (importlib.resources), not
from files next to the sources. The new environment borrows this one's third-party packages (a
path file), so that nothing is downloaded; benchfoundry itself comes only from the wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def test_the_wheel_in_a_fresh_venv_runs_synth_ingest_extract_generate(tmp_path):
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".venv*", ".git", ".prefect", "build", "runs", "*.egg-info", "__pycache__", ".*_cache"
        ),
    )
    dist = tmp_path / "dist"
    # The commands talk to the suite's Prefect server (its URL is inherited): a temporary server
    # per command is what tests/benchfoundry/cli/test_cli_process.py tests.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)],
         tmp_path, env)  # fmt: skip
    (wheel,) = dist.glob("benchfoundry-*.whl")
    # One global name: every module of the wheel lies under benchfoundry/ (the Prefect folders
    # flows/, tasks/, extractors/, prompts/ and validation/ are its subpackages).
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"benchfoundry"}, tops
    assert "benchfoundry/tasks/review/app/templates/batch.html" in archive.namelist()
    assert "benchfoundry/explorer/static/explorer.js" in archive.namelist()  # the explorer's page
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    python = venv / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
             tmp_path, env).strip()
    )  # fmt: skip
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run([*pip, "--python", str(python), "install", "--no-deps", "-q", str(wheel)], tmp_path, env)

    work = tmp_path / "work"
    work.mkdir()
    env = {**env, "PREFECT_HOME": str(work / ".prefect"), "DO_NOT_TRACK": "1"}
    where = json.loads(
        _run([str(python), "-c",
              "import json, benchfoundry, benchfoundry.prompts as prompts, benchfoundry.tasks,"
              " benchfoundry.flows;"
              "from benchfoundry.data import data_path;"
              "print(json.dumps([benchfoundry.__file__, prompts.__file__,"
              " str(data_path('models.yaml')), str(data_path('taxonomies', 'mmbench.yaml')),"
              " str(data_path('demo', 'synthetic', 'questions.tsv'))]))"],
             work, env)
    )  # fmt: skip
    for path in where:
        assert Path(path).is_file() and Path(path).is_relative_to(venv), path
        assert not Path(path).is_relative_to(REPO)

    cli = str(venv / "bin" / "benchfoundry")
    _run([cli, "synth", "--out", "syn", "--objects", "2", "--text", "1"], work, env)
    demo = where[4].rsplit("/", 1)[0]  # the packaged demo corpus's reference questions
    ingest = json.loads(
        _run([cli, "ingest", "syn/images", f"{demo}/questions.tsv", "--out", "run", "--json"],
             work, env)
    )  # fmt: skip
    assert ingest["images_added"] >= 3 and ingest["seed_questions_read"] > 0
    extract = json.loads(_run([cli, "extract", "--out", "run", "--json"], work, env))
    assert extract["images_extracted"] == ingest["images_added"]
    spec = work / "spec.yaml"
    spec.write_text("name: w\nsources: [{kind: packaged}]\ntaxonomy: mmbench\n", encoding="utf-8")
    generate = json.loads(
        _run([cli, "generate", "--out", "run", "--spec", str(spec), "--json"], work, env)
    )
    assert generate["taxonomy"] == "mmbench" and generate["candidates"] > 0
    models = json.loads(_run([cli, "models", "--json"], work, env))
    assert any(m["name"] == "smollm2" for m in models["models"])
    stages = json.loads(_run([cli, "stages", "--json"], work, env))
    assert [s["name"] for s in stages["stages"]][:3] == ["ingest", "extract", "generate"]
