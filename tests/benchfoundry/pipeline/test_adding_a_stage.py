"""Adding a stage is one package, one flow file and one registry line (docs/architecture.md): a
toy stage written here into a temporary package, registered, named in a spec with options of its
own, and run through the real `build` flow after ingest."""

from __future__ import annotations

import sys
import textwrap

import pytest

from benchfoundry.flows.build import build
from benchfoundry.pipeline.build_report import build_text
from benchfoundry.pipeline.registry import STAGES, Stage, options_model, register, unregister
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")

PACKAGE = {
    "toystage/__init__.py": '"""A toy stage."""\n',
    "toystage/options.py": """
        from benchfoundry.core.options import StageOptionsModel

        class ToyOptions(StageOptionsModel):
            greeting: str = "hello"
            batch_size: int = 1

            def named_dimensions(self):
                return {}
        """,
    "toystage/summary.py": """
        from benchfoundry.core.summary import StageSummary

        class ToySummary(StageSummary):
            run: str
            images: int
            greeting: str
        """,
    "toystage/stage.py": """
        from benchfoundry.core.batches import INLINE
        from benchfoundry.core.records import ImageRecord
        from benchfoundry.storage.atomic import atomic_write_bytes
        from benchfoundry.storage.tables import RunFolder
        from toystage.summary import ToySummary

        def count(ids):
            return len(ids)

        def run(stage, mapper=INLINE):
            options = stage.options.toy
            run_folder = RunFolder(stage.run)
            ids = sorted(run_folder.table(ImageRecord).key_set())
            jobs = [((ids[i : i + options.batch_size],), len(ids[i : i + options.batch_size]))
                    for i in range(0, len(ids), options.batch_size)]
            total = sum(mapper.map(count, jobs, label="toy count", total=len(ids)))
            text = f"{options.greeting}: {total} images\\n"
            atomic_write_bytes(run_folder.root / "reports" / "toy.txt", text.encode())
            return ToySummary(run=str(run_folder.root), images=total, greeting=options.greeting)
        """,
    "toyflow.py": """
        from prefect import flow

        from benchfoundry.pipeline.registry import StageRun, run_in_flow

        @flow(name="toy")
        def toy(stage: StageRun):
            return run_in_flow("toy", stage)
        """,
}


@pytest.fixture
def toy_stage(tmp_path, monkeypatch):
    where = tmp_path / "plugin"
    for name, text in PACKAGE.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.syspath_prepend(str(where))
    register(
        Stage.of(
            "toy",
            "count the stored images and greet",
            "toystage",
            inputs=("images",),
            outputs=("reports/toy.txt",),
            flow="toyflow:toy",
            requires=("images", "ingest"),
        )
    )
    yield
    unregister("toy")
    for name in [m for m in sys.modules if m.startswith(("toystage", "toyflow"))]:
        del sys.modules[name]


def test_a_toy_stage_from_a_temporary_package_runs_through_build(toy_stage, tmp_path, image_bytes):
    images = tmp_path / "images"
    images.mkdir()
    for seed in range(3):
        (images / f"{seed}.png").write_bytes(image_bytes(seed=seed))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: toy-build\n"
        "sources: [{kind: folder, path: images}]\n"
        "stages: [ingest, toy]\n"
        "options: {toy: {greeting: hi, batch_size: 2}}\n",
        encoding="utf-8",
    )
    assert "toy" in options_model().model_fields

    summary = build(str(spec), str(tmp_path / "run"))

    assert summary.stages == ["ingest", "toy"]
    toy = summary.of("toy")
    assert (toy.images, toy.greeting) == (3, "hi")
    run = RunFolder(tmp_path / "run")
    assert (run.root / "reports" / "toy.txt").read_text() == "hi: 3 images\n"
    manifest = run.read_manifest()
    assert manifest["toy"]["options"] == {"greeting": "hi", "batch_size": 2}
    assert manifest["toy"]["summary"]["images"] == 3
    # Its summary renders itself with the defaults every stage summary has.
    assert "Toy:" in build_text(summary) and "greeting: hi" in build_text(summary)
    assert "| images | 3 |" in toy.markdown()


def test_without_the_registry_line_the_spec_refuses_the_stage(tmp_path):
    from benchfoundry.pipeline.spec import SpecError, load_spec

    assert "toy" not in STAGES
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: x\nsources: [{kind: packaged}]\nstages: [ingest, toy]\n", encoding="utf-8"
    )
    with pytest.raises(SpecError, match="toy"):
        load_spec(spec)
