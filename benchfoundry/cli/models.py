"""Commands about models: the catalogue, a quick check of each model, the response cache, and
the local OpenAI-compatible test server."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from benchfoundry.cli.common import JsonOpt, OutOpt, UserError, app, emit, run

cache_app = typer.Typer(no_args_is_help=True, help="Export or import a run's model response cache.")
app.add_typer(cache_app, name="cache")

CatalogueOpt = Annotated[
    Path | None,
    typer.Option("--catalogue", help="Model catalogue YAML (default: the packaged one)."),
]


def _check(gateway: Any, name: str) -> dict[str, Any]:
    """One tiny call to the model (the preflight's probe): its reply or its error, and time."""
    from benchfoundry.pipeline.preflight import probe

    return probe(gateway, name).model_dump(exclude_none=True)


@app.command()
def models(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Model names or spec strings (default: the catalogue)."),
    ] = None,
    catalogue: CatalogueOpt = None,
    spec: Annotated[
        Path | None, typer.Option("--spec", help="List the models a build spec names, by role.")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Make one cheap call to each model and time it.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the configured models; with --check, call each once and report its latency."""

    def action() -> None:
        from benchfoundry.gateway import Gateway
        from benchfoundry.gateway.assemble import default_catalogue
        from benchfoundry.pipeline.spec import load_spec

        build = load_spec(spec) if spec else None
        known = default_catalogue(catalogue or (build.model_catalogue if build else None))
        gateway = Gateway(known)
        roles_in_spec: dict[str, list[str]] = {}
        for role, listed in (build.models if build else {}).items():
            for name in listed:
                roles_in_spec.setdefault(name, []).append(role)
        chosen = names or list(roles_in_spec) or list(known)
        rows = []
        for name in chosen:
            model = gateway.spec(name)
            row: dict[str, Any] = {
                "name": model.name,
                "provider": model.provider,
                "model": model.model,
                "base_url": model.display_url,
                "roles": roles_in_spec.get(name) or list(model.roles),
                "price_in_per_mtok": model.price_in_per_mtok,
                "price_out_per_mtok": model.price_out_per_mtok,
                "concurrency": model.concurrency,
                "rpm": model.rpm,
                "tpm": model.tpm,
            }
            if check:
                row["check"] = _check(gateway, name)
                row["sees"] = gateway.sees(name) if row["check"]["ok"] else None
            rows.append(row)
        lines = []
        for row in rows:
            where = f" @ {row['base_url']}" if row["base_url"] else ""
            line = f"{row['name']:<18} {row['provider']}/{row['model']}{where}  roles: {', '.join(row['roles']) or '-'}"
            if check:
                result = row["check"]
                line += (
                    f"\n    {'ok' if result['ok'] else 'FAILED'} in {result['seconds']:.2f}s: "
                    + (
                        f"sees {row['sees']}, replied {result['reply']!r}"
                        if result["ok"]
                        else result["error"]
                    )
                )
            lines.append(line)
        emit(as_json, {"models": rows}, "\n".join(lines) or "no models configured")
        if check and not all(r["check"]["ok"] for r in rows):
            raise typer.Exit(1)

    run(False, action)


@cache_app.command("export")
def cache_export(
    file: Annotated[Path, typer.Argument(help="New SQLite file to write.")], out: OutOpt
) -> None:
    """Copy a run's response cache to FILE, to share it."""

    def action() -> None:
        from benchfoundry.gateway.assemble import cache_path
        from benchfoundry.gateway.cache import ResponseCache

        if not cache_path(out).exists():
            raise UserError(f"run {out} has no response cache yet")
        n = ResponseCache(cache_path(out)).export_to(file)
        emit(False, {}, f"exported {n} responses to {file}")

    run(False, action)


@cache_app.command("import")
def cache_import(
    file: Annotated[Path, typer.Argument(help="A cache file made by 'cache export'.")], out: OutOpt
) -> None:
    """Add the responses of FILE that the run's cache lacks."""

    def action() -> None:
        from benchfoundry.gateway.assemble import cache_path
        from benchfoundry.gateway.cache import ResponseCache

        if not file.exists():
            raise UserError(f"cache file {file} does not exist")
        n = ResponseCache(cache_path(out)).merge_from(file)
        emit(False, {}, f"imported {n} new responses into {cache_path(out)}")

    run(False, action)


@app.command("serve-test")
def serve_test(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 8000,
    script: Annotated[
        Path | None,
        typer.Option(help="YAML script: default, sequence, rules [{model, pattern, reply}]."),
    ] = None,
    latency: Annotated[float, typer.Option(help="Seconds to wait before each answer.")] = 0.0,
    max_rps: Annotated[
        float | None, typer.Option(help="Answer 429 above this many requests per second.")
    ] = None,
    faults: Annotated[
        str | None,
        typer.Option(
            help="Faults at random, KIND:RATE,... with KIND one of 429, 400, 500, 503, 5xx, "
            "timeout (or slow), drop, malformed, empty; e.g. 429:0.1,5xx:0.05,timeout:0.02."
        ),
    ] = None,
    fault_delay: Annotated[
        float,
        typer.Option(
            help="Seconds a timeout fault waits before answering (a model times out when its "
            "timeout_s is shorter)."
        ),
    ] = 5.0,
    seed: Annotated[int, typer.Option(help="Seed of the random faults.")] = 0,
    limit_mm_per_prompt: Annotated[
        str | None,
        typer.Option(
            help="At most this many images and clips per request, as vLLM's option: "
            "image=4,video=1 (more is answered 400)."
        ),
    ] = None,
    served: Annotated[
        list[str] | None,
        typer.Option("--serve", help="Serve only this model name (repeat); others get 404."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", help="Accept only this bearer token; others get 401."),
    ] = None,
) -> None:
    """Run the local OpenAI-compatible test server (scripted answers, injected faults)."""

    def action() -> None:
        import yaml

        from benchfoundry.devtools.testserver import Script, TestServer, parse_fault_rates

        try:
            rates = parse_fault_rates(faults or "")
        except ValueError as exc:
            raise UserError(f"--faults: {exc}") from None
        raw = yaml.safe_load(script.read_text(encoding="utf-8")) if script else {}
        limits = {}
        for item in filter(None, (limit_mm_per_prompt or "").split(",")):
            kind, _, count = item.partition("=")
            if kind.strip() not in ("image", "video") or not count.strip().isdigit():
                raise UserError(f"--limit-mm-per-prompt: {item!r} is not image=N or video=N")
            limits[kind.strip()] = int(count)
        server = TestServer(
            Script.from_dict(raw or {}),
            latency_s=latency,
            max_rps=max_rps,
            port=port,
            fault_rates=rates,
            fault_delay=fault_delay,
            seed=seed,
            limit_mm_per_prompt=limits,
            served=served or None,
            api_key=api_key,
        ).start()
        injected = ", ".join(f"{k} {v:.0%}" for k, v in rates.items()) or "none"
        # Ctrl-C or a plain `kill` stops it, even when started in the background (where a
        # shell may have set SIGINT to be ignored).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        print(
            f"OpenAI-compatible test server at {server.base_url} (faults: {injected}; "
            "Ctrl-C to stop)",
            flush=True,
        )
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.stop()

    run(False, action)
