import json

import pytest
from prefect import flow

from benchfoundry.devtools.testserver import TestServer
from benchfoundry.gateway import MCQ, GenerateParams
from benchfoundry.gateway.assemble import cache_path, gateway_for_run
from benchfoundry.gateway.models import ModelSpec
from benchfoundry.gateway.usage_summary import record_usage, usage_report

pytestmark = pytest.mark.usefixtures("prefect_api")


def test_usage_is_written_to_the_run_and_summed_over_runs(tmp_path):
    with TestServer() as server:
        spec = ModelSpec(
            name="priced",
            provider="openai",
            model="m",
            base_url=server.base_url,
            price_in_per_mtok=1000.0,
            price_out_per_mtok=2000.0,
        )

        @flow
        def stage() -> str:
            gateway = gateway_for_run(tmp_path, stage="filter", catalogue={"priced": spec})
            gateway.generate("priced", "one two three")
            gateway.generate("priced", "one two three")
            gateway.generate(
                "blind/longest", "q", GenerateParams(), MCQ(question="q", options=("a", "bb"))
            )
            report = usage_report(gateway)
            record_usage(gateway, str(tmp_path))
            return report

        report = stage()
        stage()
    usage = json.loads((tmp_path / "usage.json").read_text())
    priced = usage["filter"]["priced"]
    assert priced["calls"] == 4 and priced["cached"] == 3, (
        "the second run and the repeat come from the cache"
    )
    # Tokens and cost are those of the one call made: a replay processes nothing.
    assert priced["tokens_in"] == 3 and priced["cost"] == pytest.approx((3 * 1000 + 1 * 2000) / 1e6)
    assert usage["filter"]["blind/longest"]["calls"] == 2
    assert server.stats.requests == 1
    assert "| filter | priced | 2 | 1 |" in report
    assert cache_path(tmp_path).exists()
