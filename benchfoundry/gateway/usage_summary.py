"""Record what a stage's model calls cost: into the run folder and, inside a Prefect run, as an
artifact."""

from __future__ import annotations

from pathlib import Path

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


def record_usage(gateway: Gateway, run_root: str | Path) -> Path:
    """Add the gateway's counts to `RUN/usage.json`; inside a Prefect flow or task run, also
    publish them as the `model-usage` artifact."""
    from prefect.context import FlowRunContext, TaskRunContext

    report = usage_report(gateway)  # before the write, which starts the counts afresh
    path = gateway.ledger.write(run_root)
    if FlowRunContext.get() is not None or TaskRunContext.get() is not None:
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(
            markdown=report, key="model-usage", description="Model calls, tokens and cost"
        )
    return path
