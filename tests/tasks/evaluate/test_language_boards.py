"""A bilingual release evaluated as a researcher would, through the command line against the
test server: two mirror-image models (one right in English only, the other in Chinese only) tie
when the languages are pooled, but each language is its own board, with its own comparisons and
ranks, and the gap reads as a loss for one and a gain for the other."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchfoundry.devtools.testserver import Refusal, Rule, Script, TestServer

REPO = Path(__file__).resolve().parents[3]
N = 20  # items per language, two per image
pytestmark = pytest.mark.slow


def _release(folder: Path, image_bytes) -> Path:
    """A release of N English items and their Chinese twins, two items per image."""
    rows = []
    for k in range(N):
        image = image_bytes(seed=k // 2)
        rows.append(
            {
                "index": k, "question_id": f"q{k:02d}", "question": f"Question {k}: which one?",
                "hint": None, "options": [f"{k}-right", f"{k}-w1", f"{k}-w2", f"{k}-w3"],
                "answer": "A", "image": {"bytes": image, "path": None},
                "image_id": hashlib.sha256(image).hexdigest(), "category": "c",
                "l2_category": "c", "difficulty": "easy", "dimension": "c",
            }
        )  # fmt: skip
    twins = [{**r, "question": f"问题 {r['index']}：哪一个？"} for r in rows]
    (folder / "data" / "zh").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "test-00000.parquet")
    pq.write_table(pa.Table.from_pylist(twins), folder / "data" / "zh" / "test-00000.parquet")
    manifest = {"name": "bi", "version": "v1", "files": {}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def _mirror(right_in: str):
    """Right on the items of one language (it names option A), wrong on the other's (B)."""

    def answer(request) -> str:
        chinese = "问题" in request.text
        return "A" if chinese == (right_in == "zh") else "B"

    return answer


def test_each_language_is_its_own_board(tmp_path, image_bytes):
    release = _release(tmp_path / "release", image_bytes)
    refusal = Refusal(400, "this model does not read Chinese")
    script = Script(
        rules=[
            Rule(_mirror("en"), model="en-fan"),
            Rule(_mirror("zh"), model="zh-fan"),
            Rule(refusal, model="en-only", pattern="问题"),
            Rule(_mirror("en"), model="en-only"),
        ]
    )
    with TestServer(script) as server:
        en, zh, en_only = (f"openai/{m}@{server.base_url}" for m in ("en-fan", "zh-fan", "en-only"))
        args = [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(tmp_path / "run"),
                "--dataset", str(release), "--model", en, "--model", zh, "--mode", "vanilla"]  # fmt: skip
        done = subprocess.run(
            args + ["--json"], cwd=REPO, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        # what a person reads: the same command without --json (its answers from the cache)
        shown = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert shown.returncode == 0, shown.stderr[-3000:]
        # A model that fails only on the Chinese twins: the command says so and exits 3.
        failing = subprocess.run(
            [*args[:8], "--model", en_only, "--mode", "vanilla"],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert failing.returncode == 3, failing.stderr[-3000:]
    said = f"{en_only} (sees the image): 20 of 40 questions failed (en 0, zh 20; HTTP 400 20)"
    assert said in failing.stderr and said in failing.stdout
    assert (
        f"| {en_only} (sees the image) | 100.0% [83.9%, 100.0%] | - | 0; zh 20 |" in failing.stdout
    )
    # No printed interval is zero-width, at 0% or 100% (en-fan is right on every English item
    # and wrong on every Chinese one; its loss is 100%), and the legend says which is printed.
    printed = re.findall(r"(-?\d+\.\d)% \[([-+]?\d+\.\d)%, ([-+]?\d+\.\d)%\]", failing.stdout)
    assert len(printed) >= 8
    assert all(float(low) < float(high) for _, low, high in printed), printed
    assert "100.0% [" in failing.stdout and "0.0% [0.0%, " in failing.stdout
    assert "never a zero-width interval" in failing.stdout
    assert "Agresti and Min" in failing.stdout
    html = (tmp_path / "run" / "reports" / "evaluation" / "report.html").read_text("utf-8")
    assert "<th>refused</th>" in html and "never a zero-width interval" in html
    summary = json.loads(done.stdout)
    assert summary["dataset"]["headline"] == "en" and summary["dataset"]["questions"] == N
    assert summary["dataset"]["languages"] == {"en": N, "zh": N}
    english = {s["model"]: s for s in summary["scores"]}
    assert english[en]["vanilla"]["accuracy"] == 1.0 and english[zh]["vanilla"]["accuracy"] == 0.0
    assert (english[en]["rank_best"], english[zh]["rank_best"]) == (1, 2)
    assert english[en]["by_language"]["zh"]["vanilla"]["accuracy"] == 0.0  # the card reads it
    (board,) = summary["language_boards"]
    chinese = {s["model"]: s for s in board["scores"]}
    assert board["language"] == "zh" and board["questions"] == N
    assert chinese[en]["vanilla"]["accuracy"] == 0.0 and chinese[zh]["vanilla"]["accuracy"] == 1.0
    assert (chinese[zh]["rank_best"], chinese[en]["rank_best"]) == (1, 2)
    (pair,) = board["comparisons"]
    assert pair["model_a"] == zh and pair["difference"] == 1.0 and pair["significant"]
    assert pair["dataset"].startswith("bi [zh]")
    (headline_pair,) = summary["comparisons"]
    assert headline_pair["model_a"] == en and headline_pair["significant"]
    # the interval the legend names: questions share images, so by image, not Wilson
    accuracy = english[zh]["vanilla"]
    assert accuracy["clustered_low"] is not None
    # what the command prints without --json, as printed (not rebuilt here from the JSON)
    out = shown.stdout
    assert "20 questions in en, the headline board; each language is its own board" in out
    assert "## Board: zh (20 questions, its items only)" in out
    assert "gains 100.0% in zh" in out and "loses 100.0% in zh" in out
    assert "loses -" not in out
    board_md = (tmp_path / "run" / "reports" / "evaluation" / "leaderboard.md").read_text(
        encoding="utf-8"
    )
    assert "| bi v1 [en] |" in board_md and "| bi v1 [zh] |" in board_md
    assert board_md.count("| chance (uniform guess) |") == 2, "each board its chance row"
