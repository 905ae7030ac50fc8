"""Record what a stage's model calls cost: into the run folder and as a Prefect artifact."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from benchfoundry.gateway import Gateway


def usage_report(gateway: Gateway) -> str:
    """Markdown: calls, cache hits, tokens, cost and errors per stage and model, with totals."""
    total = gateway.ledger.totals()
    return (
        "# Model usage\n\n"
        + gateway.ledger.markdown()
        + f"\nTotal: {total.calls} calls ({total.cached} from the cache), {total.tokens_in} tokens in, "
        f"{total.tokens_out} tokens out, cost {total.cost:.4f}\n"
    )


@task(name="record-model-usage", cache_policy=NO_CACHE)
def record_usage_task(gateway: Gateway, run_root: str) -> Path:
    """Add the gateway's counts to `RUN/usage.json` and publish them as an artifact."""
    report = usage_report(gateway)  # before the write, which starts the counts afresh
    path = gateway.ledger.write(run_root)
    create_markdown_artifact(
        markdown=report,
        key="model-usage",
        description="Model calls, tokens and cost",
    )
    return path
