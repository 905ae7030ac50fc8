"""The review desk on a real run folder: how long its pages and API answers take, what the
thumbnails save, and (with --screenshot) a picture of the evidence overlay taken in Chromium.

    python bench/review_desk.py --run RUN [--batch ID] [--question QID]
        [--screenshot docs/images/review-evidence-overlay.png]

RUN needs review batches (`benchfoundry build datasets/demo.yaml` makes them; so does
`benchfoundry review export --out RUN` after quality control). The app runs in this process on
127.0.0.1 (uvicorn in a thread). Times are the best of three requests, each reading the run
folder afresh as the app does. The batch is the longest one unless named; the screenshot shows
the named question, or the sample of the batch's first page with the most cited facts, with its
overlay on.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def serve(run: str) -> tuple[str, object]:
    import uvicorn

    from benchfoundry.decisions.store import ReviewStore, StoreError
    from benchfoundry.tasks.review.app import create_app

    with contextlib.suppress(StoreError):  # added by an earlier run of the bench
        ReviewStore.open(run).add_user("bench-admin", "admin", created_by="bench", token=TOKEN)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(run), host="127.0.0.1", port=port, log_level="error")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


TOKEN = "review-desk-bench-admin-token-0123456789"  # the bench's own admin in the run


def get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


def best(url: str, times: int = 3) -> tuple[float, int]:
    """(best seconds, bytes) of `times` requests."""
    took, size = [], 0
    for _ in range(times):
        start = time.perf_counter()
        size = len(get(url))
        took.append(time.perf_counter() - start)
    return min(took), size


def screenshot(url: str, batch: dict, question: str, path: Path) -> None:
    from playwright.sync_api import sync_playwright

    executable = next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
    )
    if executable is None:
        raise SystemExit("no Chromium on this machine: install Debian's 'chromium' as root")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{url}/?token={TOKEN}")  # signs in (the token moves into a cookie)
        page.goto(f"{url}/batches/{batch['batch_id']}")
        sample = page.locator(f'.sample[data-question="{question}"]')
        sample.focus()
        page.keyboard.press("o")
        sample.locator("svg.overlay rect").first.wait_for()
        page.wait_for_timeout(300)  # the full image replaces the thumbnail
        path.parent.mkdir(parents=True, exist_ok=True)
        sample.screenshot(path=str(path))
        browser.close()


def main() -> None:
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--batch")
    parser.add_argument("--question")
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    url, server = serve(args.run)
    try:
        batches = json.loads(get(url + "/api/batches"))["batches"]
        if not batches:
            raise SystemExit(f"{args.run} has no review batches: run `benchfoundry review export`")
        batch = (
            next(b for b in batches if b["batch_id"] == args.batch)
            if args.batch
            else max(batches, key=lambda b: b["total"])
        )
        bid = batch["batch_id"]
        reviewer = urllib.request.quote(batch["reviewer"])
        rows = [
            ("batch list page", f"{url}/"),
            ("batch page 1 (50 samples)", f"{url}/batches/{bid}"),
            ("API: 50 samples (?offset=0&limit=50)", f"{url}/api/batches/{bid}?offset=0&limit=50"),
            (f"API: the whole batch ({batch['total']})", f"{url}/api/batches/{bid}"),
            ("reviewer page", f"{url}/reviewers/{reviewer}"),
            ("the adjudicator's queue", f"{url}/conflicts"),
        ]
        print(f"run {args.run}: {len(batches)} batches; batch {bid} of {batch['total']} samples\n")
        print("| request | best of 3 (s) | bytes |\n|---|---|---|")
        for name, address in rows:
            took, size = best(address)
            print(f"| {name} | {took:.3f} | {size:,} |")
        html = get(f"{url}/batches/{bid}").decode()
        images = sorted(set(re.findall(r'data-full="/images/(\w+)"', html)))
        full = sum(len(get(f"{url}/images/{i}")) for i in images)
        start = time.perf_counter()
        thumbs = sum(len(get(f"{url}/images/{i}?w=320")) for i in images)
        first = time.perf_counter() - start
        start = time.perf_counter()
        for i in images:
            get(f"{url}/images/{i}?w=320")
        cached = time.perf_counter() - start
        print(
            f"\nthe page's {len(images)} distinct images: {full:,} bytes in full, {thumbs:,} as "
            f"320-pixel thumbnails ({thumbs / max(1, full):.0%}); making them took {first:.3f} s, "
            f"from the cache {cached:.3f} s"
        )
        if args.screenshot:
            samples = json.loads(get(f"{url}/api/batches/{bid}?offset=0&limit=50"))["samples"]
            question = (
                args.question
                or max(samples, key=lambda s: sum(shape["cited"] for shape in s["overlay"]))[
                    "question_id"
                ]
            )
            screenshot(url, batch, question, args.screenshot)
            print(f"\nscreenshot of {question} with its evidence overlay: {args.screenshot}")
    finally:
        server.should_exit = True


if __name__ == "__main__":
    main()
