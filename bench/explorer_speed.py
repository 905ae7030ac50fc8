"""How fast the item explorer opens and filters at scale, in Chromium (docs/performance.md).

Writes an explorer of N items (default 10,000, each with a Chinese twin, so 2N table rows) answered
by M models (default 20) under CircularEval, with one image per two items, through the
explorer's own writer (`benchfoundry.explorer.site.write_site`, the one `publish` and
`evaluate` call); then opens it from file:// in Debian's Chromium (headless, through
Playwright) and prints:

- write: seconds to write the site, its size, the table's and the item pages' data;
- open: from navigation to the table drawn (`performance.now()` when the first page of rows is
  in the DOM), median and worst of a few fresh page loads;
- filter: each filter's time from the control's change to the table redrawn and laid out;
- item: from a click on an item to its page drawn (its data chunk loaded on demand).

Targets (issue 57): open under 2 s, every filter under 100 ms.

    .venv/bin/python bench/explorer_speed.py [--items 10000] [--models 20] [--out DIR]
"""

from __future__ import annotations

import argparse
import io
import random
import shutil
import statistics
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from PIL import Image

from benchfoundry.explorer.site import STATIC, Item, Media, Model, Pass, Site, Text, write_site

DIMENSIONS = [f"seed_bench/{d}" for d in (
    "scene_understanding", "instance_identity", "instance_attributes", "instance_location",
    "instances_counting", "spatial_relation", "instance_interaction", "visual_reasoning",
    "text_understanding", "action_recognition", "action_prediction", "procedure_understanding",
)]  # fmt: skip
BINS = ["tough", "hard", "medium", "easy"]
LETTERS = "ABCD"


def _image(seed: int) -> bytes:
    rng = random.Random(seed)
    image = Image.new("RGB", (640, 480), tuple(rng.randrange(256) for _ in range(3)))
    for _ in range(6):
        x, y = rng.randrange(560), rng.randrange(400)
        image.paste(tuple(rng.randrange(256) for _ in range(3)), (x, y, x + 80, y + 80))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


def _passes(rng: random.Random, key: str, skill: float) -> list[Pass]:
    """CircularEval: passes until the first wrong one."""
    out = []
    for k in range(4):
        order = [LETTERS[(i + k) % 4] for i in range(4)]
        right = rng.random() < skill
        unread = not right and rng.random() < 0.1
        shown = LETTERS[order.index(key)] if right else rng.choice("ABCD".replace(key, ""))
        extracted = None if unread else shown
        reply = "I cannot tell from the image." if unread else f"The answer is {shown}."
        out.append(Pass(k, order, reply, extracted, right))
        if not right:
            break
    return out


def synthetic_site(items: int, models: int, out: Path) -> Site:
    rng = random.Random(0)
    media = Media(out)
    respondents = [
        Model(f"model-{m:02d} (sees the image)", f"model-{m:02d}", "evaluation")
        for m in range(models)
    ]
    skills = [0.35 + 0.6 * m / max(1, models - 1) for m in range(models)]
    made = []
    for n in range(items):
        image, thumb, width, height = media.image(f"img{n // 2:06d}", _image(n // 2), "x.jpg")
        key = LETTERS[n % 4]
        words = f"object-{n} colour-{rng.randrange(50)} place-{rng.randrange(50)}"
        item = Item(
            qid=f"{n:016x}",
            index=n,
            dimension=DIMENSIONS[n % len(DIMENSIONS)],
            bin=BINS[rng.randrange(4)],
            key=key,
            texts={
                "en": Text(
                    f"Which option describes {words}?", None, [f"{words} {j}" for j in range(4)]
                ),
                "zh": Text(f"哪一项描述了物体{n}？", None, [f"选项{j}：物体{n}" for j in range(4)]),
            },
            image_id=f"img{n // 2:06d}",
            image=image,
            thumb=thumb,
            width=width,
            height=height,
            evidence=[f"instance red block at [{n % 500}, 40, {n % 500 + 80}, 120]"],
            shapes=[{"box": [n % 500, 40, n % 500 + 80, 120], "label": "instance red block"}],
        )
        for lang in ("en", "zh"):
            item.answers[lang] = {m: _passes(rng, key, skills[m]) for m in range(models)}
            right = sum(all(p.correct for p in ps) for ps in item.answers[lang].values())
            item.analysis[lang] = {
                "respondents": models,
                "right": right,
                "difficulty": round(rng.gauss(0, 1), 3),
                "discrimination": round(rng.gauss(1, 0.5), 3),
                "suspect": rng.random() < 0.03,
                "suspect_kind": "key",
                "why": "discrimination below 0.2",
            }
        made.append(item)
    return Site(f"bench {items}", "evaluation", "bench", "v1", respondents, made)


FILTERS = [
    ("dimension", "#f-dim", "select", "seed_bench/instances_counting"),
    ("language", "#f-lang", "select", "zh"),
    ("bin", "#f-bin", "select", "tough"),
    ("model", "#f-model", "select", "3"),
    ("model's outcome: wrong", "#f-outcome", "select", "W"),
    ("models disagree", "#f-disagree", "check", True),
    ("every model wrong", "#f-allWrong", "check", True),
    ("suspect", "#f-suspect", "check", True),
    ("free text", "#f-text", "text", "colour-7 "),
    ("clear the text", "#f-text", "text", ""),
]
RESET = """() => {
  document.querySelectorAll('select').forEach(s => { s.value = ''; s.dispatchEvent(new Event('change')); });
  document.querySelectorAll('input[type=checkbox]').forEach(c => { c.checked = false; c.dispatchEvent(new Event('change')); });
  const t = document.querySelector('#f-text'); t.value = ''; t.dispatchEvent(new Event('input'));
}"""
MEASURE = """([selector, kind, value]) => {
  const e = document.querySelector(selector);
  const t0 = performance.now();
  if (kind === 'check') { e.checked = value; e.dispatchEvent(new Event('change')); }
  else if (kind === 'text') { e.value = value; e.dispatchEvent(new Event('input')); }
  else { e.value = value; e.dispatchEvent(new Event('change')); }
  document.body.offsetHeight;  // layout included
  return [performance.now() - t0, window.BFEXPLORER.shown.length];
}"""


def measure(index: Path, loads: int) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        opened = []
        for _ in range(loads):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(index.as_uri())
            page.wait_for_selector("body[data-ready=table]", timeout=60000)
            opened.append(page.evaluate("() => window.BFEXPLORER.readyAt") / 1000)
            page.close()
        print(
            f"open (navigation to table drawn), {loads} fresh loads: median "
            f"{statistics.median(opened):.2f} s, worst {max(opened):.2f} s"
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(index.as_uri())
        page.wait_for_selector("body[data-ready=table]", timeout=60000)
        worst = 0.0
        for name, selector, kind, value in FILTERS:
            page.evaluate(RESET)  # each filter on the whole table (the outcome on model 3's)
            if selector == "#f-outcome":
                page.evaluate(MEASURE, ["#f-model", "select", "3"])
            times = []
            for _ in range(5):  # back and forth, so that each run filters for real
                page.evaluate(MEASURE, [selector, kind, False if kind == "check" else ""])
                took, shown = page.evaluate(MEASURE, [selector, kind, value])
                times.append(took)
            worst = max(worst, max(times))
            print(
                f"filter {name:<24} median {statistics.median(times):6.1f} ms, "
                f"worst {max(times):6.1f} ms ({shown} rows)"
            )
        print(f"worst filter: {worst:.1f} ms")
        page.evaluate(RESET)
        items = []
        for n in range(5):
            link = page.locator("#rows a").nth(n * 7)
            t0 = time.perf_counter()
            link.click()
            page.wait_for_selector("body[data-ready=item]")
            items.append(time.perf_counter() - t0)
            page.go_back()
            page.wait_for_selector("body[data-ready=table]")
        print(
            f"item page (click to drawn, its chunk loaded): median {statistics.median(items) * 1000:.0f} ms, worst {max(items) * 1000:.0f} ms"
        )
        browser.close()


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--measure-only",
        type=Path,
        default=None,
        help="an explorer this script wrote: only open it",
    )
    args = parser.parse_args()
    if args.measure_only is not None:  # the front end as this checkout has it, on that data
        for name in STATIC:
            shutil.copyfile(
                resources.files("benchfoundry.explorer") / "static" / name, args.measure_only / name
            )
        measure(args.measure_only / "index.html", args.loads)
        return 0
    out = args.out or Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    t0 = time.perf_counter()
    site = synthetic_site(args.items, args.models, out)
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = write_site(site, out)
    wrote = time.perf_counter() - t0
    rows = sum(p.stat().st_size for p in (out / "data").glob("rows-*.js"))
    pages = sum(p.stat().st_size for p in (out / "data").glob("items-*.js"))
    print(
        f"{args.items} items (each with a Chinese twin: {2 * args.items} rows), {args.models} models, "
        f"{len(list((out / 'media' / 'images').iterdir()))} images"
    )
    print(
        f"write: images and thumbnails {made:.1f} s (synthetic data included), data files {wrote:.1f} s; "
        f"site {_size(out) / 2**20:.0f} MiB: table data {rows / 2**20:.1f} MiB, item pages "
        f"{pages / 2**20:.1f} MiB"
    )
    measure(index, args.loads)
    print(f"site: {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
