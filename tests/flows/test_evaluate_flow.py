"""The evaluate flows under a real Prefect API: `evaluate_dataset` takes the command line's
parameters (what the `evaluate-on-demand` deployment passes), and every deployment in
prefect.yaml names a flow that takes the parameters it is given."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import yaml

from tests.tasks.evaluate.test_evaluate import scripted, write_tsv

REPO = Path(__file__).resolve().parents[2]


def test_evaluate_dataset_flow_runs_with_the_commands_parameters(
    tmp_path, image_bytes, prefect_api
):
    from benchfoundry.devtools.testserver import TestServer
    from benchfoundry.flows.evaluate import evaluate_dataset

    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(scripted()) as server:
        summary = evaluate_dataset(
            str(tmp_path / "run"), str(tsv), [f"openai/good@{server.base_url}"], mode="vanilla"
        )
    (score,) = summary.scores
    assert summary.mode == "vanilla" and score.vanilla.correct == 8 and score.circular is None
    assert server.stats.requests == 8
    # the leaderboard is a table artifact too, chance labelled
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    # The newest of that key: the session's Prefect server also holds those of the builds other
    # tests of this worker ran before (a build's evaluate stage writes one too).
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["evaluate-leaderboard"])),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
    assert artifact.type == "table"
    rows = artifact.data if isinstance(artifact.data, list) else json.loads(artifact.data)
    assert [r["kind"] for r in rows] == ["model", "chance"]
    assert rows[0]["vanilla"] == 1.0


def test_every_deployment_names_a_flow_that_takes_its_parameters():
    config = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    names = set()
    for deployment in config["deployments"]:
        path, _, name = deployment["entrypoint"].partition(":")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        flow = getattr(module, name)
        assert hasattr(flow, "fn"), f"{deployment['name']}: {name} is not a Prefect flow"
        accepted = set(inspect.signature(flow.fn).parameters)
        assert set(deployment.get("parameters", {})) <= accepted, deployment["name"]
        names.add(deployment["name"])
    assert "evaluate-on-demand" in names
