"""Throughput of the gateway against the local OpenAI-compatible server, and cache replay.

    python bench/gateway_throughput.py [--requests 500] [--latency 0.2] [--limit 50]

The server answers after `latency` seconds and refuses with 429 above `limit` requests per second;
the model is declared with the same limit (rpm = 60 x limit). Prints the achieved rate against the
limit (goal: at least 90%), the 429s the server sent, then the rate of a second run served from
the response cache and the share of calls it replayed.

    python bench/gateway_throughput.py --url URL --model M [--api-key-env VAR] [--requests N]

measures a real OpenAI-compatible endpoint instead (a vLLM replica, say): the calls per second
it sustains at `--concurrency`, the figure `bench/capacity.py --endpoint-rps` takes. Nothing is
read from or written to a cache in that mode.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchfoundry.devtools.testserver import TestServer  # noqa: E402
from benchfoundry.gateway import Gateway, ModelSpec, Request, ResponseCache  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limit", type=float, default=50.0, help="requests per second")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--url", help="an OpenAI-compatible endpoint to measure instead")
    parser.add_argument("--model", default="m", help="the model name the endpoint serves")
    parser.add_argument("--api-key-env", default=None, help="environment variable with its key")
    args = parser.parse_args()
    if args.url:
        endpoint(args)
        return
    work = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    with TestServer(latency_s=args.latency, max_rps=args.limit) as server:
        spec = ModelSpec(
            name="bench",
            provider="openai",
            model="m",
            base_url=server.base_url,
            concurrency=args.concurrency,
            rpm=args.limit * 60,
        )
        requests = [Request(spec, f"question number {i}") for i in range(args.requests)]
        gateway = Gateway(cache=ResponseCache(work / "cache.sqlite"))
        start = time.perf_counter()
        results = gateway.generate_many(requests, workers=args.concurrency * 2)
        elapsed = time.perf_counter() - start
        failed = sum(not hasattr(r, "text") for r in results)
        rate = args.requests / elapsed
        print(
            f"{args.requests} calls, {args.latency * 1000:.0f} ms latency, limit {args.limit:g}/s, "
            f"concurrency {args.concurrency}: {elapsed:.2f} s, {rate:.1f} calls/s = {100 * rate / args.limit:.0f}% "
            f"of the limit; server sent {server.stats.by_status.get('429', 0)} x 429; {failed} failed"
        )
        seen = server.stats.requests
        replay = Gateway(cache=ResponseCache(work / "cache.sqlite"))
        start = time.perf_counter()
        again = replay.generate_many(requests, workers=args.concurrency * 2)
        elapsed = time.perf_counter() - start
        hits = sum(getattr(r, "cached", False) for r in again)
        print(
            f"replay: {elapsed:.2f} s, {args.requests / elapsed:.0f} calls/s, {100 * hits / args.requests:.0f}% "
            f"from the cache, {server.stats.requests - seen} requests reached the server"
        )


def endpoint(args: argparse.Namespace) -> None:
    """Calls per second a real endpoint sustains at the given concurrency, with no cache."""
    spec = ModelSpec(
        name="endpoint",
        provider="openai",
        model=args.model,
        base_url=args.url,
        api_key_env=args.api_key_env,
        concurrency=args.concurrency,
    )
    requests = [
        Request(spec, f"Answer with one letter. Question {i}: A or B?")
        for i in range(args.requests)
    ]
    gateway = Gateway(cache=None)
    start = time.perf_counter()
    results = gateway.generate_many(requests, workers=args.concurrency)
    elapsed = time.perf_counter() - start
    failed = sum(not hasattr(r, "text") for r in results)
    print(
        f"{args.requests} calls at concurrency {args.concurrency}: {elapsed:.2f} s, "
        f"{(args.requests - failed) / elapsed:.1f} answered calls/s; {failed} failed"
    )


if __name__ == "__main__":
    main()
