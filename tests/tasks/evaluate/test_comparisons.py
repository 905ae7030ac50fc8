"""Paired comparisons: the exact McNemar p-value where it is known by hand (11 discordant
questions all one way: 2/2048), Holm's correction on a known family, rank ranges, the paired
bootstrap's interval; words instead of numbers for one model, too few images and runs on
different dataset versions; scripted models on the local test server, in one run and across
two runs (`benchfoundry report --json`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.tasks.evaluate.comparisons import (
    Comparison,
    compare,
    holm,
    mcnemar_p,
    pair,
    paired_bootstrap,
    rank_ranges,
)
from benchfoundry.tasks.evaluate.pairing import compare_runs
from tests.tasks.evaluate.test_evaluate import evaluate

P_11 = 2 / 2048  # two-sided exact binomial: 11 discordant, all one way


def outcomes(rights: list[bool], images: list[str] | None = None) -> dict[str, tuple[str, bool]]:
    images = images or [f"img{i}" for i in range(len(rights))]
    return {f"q{i}": (images[i], r) for i, r in enumerate(rights)}


def test_exact_mcnemar_on_eleven_discordant_pairs_all_one_way():
    assert mcnemar_p(11, 0) == pytest.approx(P_11, rel=1e-12)
    assert mcnemar_p(0, 11) == pytest.approx(P_11, rel=1e-12)
    assert mcnemar_p(0, 0) == 1.0  # nothing discordant: no evidence of a difference
    # 3 both right, 11 right for A only, 2 both wrong: 16 questions on 16 images
    a = outcomes([True] * 14 + [False] * 2)
    b = outcomes([True] * 3 + [False] * 13)
    c = pair("A", a, "B", b, "bench v1", True, "vanilla")
    assert c.discordant == {"a_right_b_wrong": 11, "b_right_a_wrong": 0}
    assert c.p_value == pytest.approx(P_11, rel=1e-12)
    assert c.difference == pytest.approx(11 / 16)
    assert c.low is not None and c.low <= c.difference <= c.high <= 1.0
    assert c.note is None


def test_holm_on_a_known_family():
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_rank_ranges_follow_the_significant_pairs():
    def c(a: str, b: str, diff: float, significant: bool) -> Comparison:
        return Comparison(
            dataset="d", with_image=True, metric="vanilla", model_a=a, model_b=b, items=10,
            images=10, accuracy_a=None, accuracy_b=None, difference=diff, low=None, high=None,
            discordant={}, p_value=0.0, p_adjusted=0.0, significant=significant,
        )  # fmt: skip

    found = rank_ranges(
        ["A", "B", "C"],
        [c("A", "B", 0.3, True), c("A", "C", 0.35, True), c("B", "C", 0.05, False)],
    )
    assert {m: (r.best, r.worst) for m, r in found.items()} == {
        "A": (1, 1),
        "B": (2, 3),
        "C": (2, 3),
    }
    none = rank_ranges(["A", "B"], [c("A", "B", 0.1, False)])
    assert {m: (r.best, r.worst) for m, r in none.items()} == {"A": (1, 2), "B": (1, 2)}


def test_the_bootstrap_resamples_images_and_is_reproducible():
    # 20 images of 3 questions each; A right on all, B right on the first two of each image
    images = [f"img{i // 3}" for i in range(60)]
    a = [True] * 60
    b = [i % 3 != 2 for i in range(60)]
    first = paired_bootstrap(images, a, b)
    assert first == paired_bootstrap(images, a, b), "fixed seed"
    # every image holds the same difference (1/3): every resample gives exactly that
    assert first == pytest.approx((1 / 3, 1 / 3))
    assert paired_bootstrap(images[:27], a[:27], b[:27]) is None, "9 images: too few"


def test_one_model_says_there_is_no_pair():
    found = compare([("A", outcomes([True, False]))], "bench v1", True, "circular")
    assert found.comparisons == []
    assert found.ranks["A"].text() == "1"
    assert found.notes == [
        "bench v1 (circular, with the image): only one model (A), so no pair to compare"
    ]


def test_too_few_images_give_no_interval_but_still_a_test():
    a = outcomes([True] * 6, images=["x", "x", "y", "y", "z", "z"])
    b = outcomes([False] * 6, images=["x", "x", "y", "y", "z", "z"])
    found = compare([("B", b), ("A", a)], "bench v1", False, "vanilla")
    (c,) = found.comparisons
    assert (c.model_a, c.model_b) == ("A", "B"), "the better model is A"
    assert c.low is None and c.high is None and c.difference == 1.0
    assert c.p_value == pytest.approx(2 / 64) and c.p_adjusted == c.p_value
    assert "only 3 images: too few to resample for an interval (at least 10)" in c.note
    assert found.notes == [
        "bench v1 (vanilla, without the image): only 3 images: too few to resample for an "
        "interval (at least 10) (every pair)"
    ]


def test_models_with_no_shared_question_are_not_tested():
    found = compare([("A", {"q1": ("i", True)}), ("B", {"q2": ("j", False)})], "d", True, "vanilla")
    (c,) = found.comparisons
    assert c.p_value is None and c.difference is None and not c.significant
    assert "no question answered by both" in c.note


# --- scripted models on the local test server ---------------------------------------------------


def write_tsv(path: Path, image_bytes, n: int = 12) -> Path:
    """n questions, one image each; the right option is '<i>-right', at A for question 0 and
    at B for the others."""
    rows = []
    for i in range(n):
        options = [f"{i}-wrong1", f"{i}-right", f"{i}-wrong2", f"{i}-wrong3"]
        if i == 0:
            options = [options[1], options[0], *options[2:]]
        rows.append(
            {
                "index": i,
                "image": base64.b64encode(image_bytes(seed=i)).decode(),
                "question": f"Question {i}: which one?",
                "A": options[0], "B": options[1], "C": options[2], "D": options[3],
                "answer": "A" if i == 0 else "B",
                "category": "things",
                "l2-category": "things",
            }
        )  # fmt: skip
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def script() -> Script:
    """'good' names the right option's text; everyone else says 'A' (right on question 0)."""
    import re

    def good(request) -> str:
        found = re.search(r"(\d+-right)", request.text)
        return found.group(1) if found else "A"

    return Script(rules=[Rule(good, model="good")], default="A")


def test_scripted_models_compared_in_one_run_and_in_the_report(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(script()) as server:
        good, poor = f"openai/good@{server.base_url}", f"openai/poor@{server.base_url}"
        summary = evaluate(tmp_path / "run", tsv, [poor, good], mode="vanilla")
    (c,) = summary.comparisons
    assert (c.model_a, c.model_b) == (good, poor)
    assert c.discordant == {"a_right_b_wrong": 11, "b_right_a_wrong": 0}
    assert c.p_value == pytest.approx(P_11, rel=1e-12) and c.p_adjusted == c.p_value
    assert c.difference == pytest.approx(11 / 12) and c.low is not None and c.significant
    by = {s.model: s for s in summary.scores}
    assert (by[good].rank, by[poor].rank) == ("1", "2")
    assert "Paired comparisons" in summary.markdown()
    assert any("McNemar p 0.0009766" in line for line in summary.lines())

    result = CliRunner().invoke(
        app, ["report", str(tmp_path / "run"), "--to", str(tmp_path / "out"), "--json"]
    )
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)
    (entry,) = files["comparisons"]
    for key in ("model_a", "model_b", "difference", "low", "high", "p_value", "p_adjusted"):
        assert key in entry
    assert entry["discordant"] == {"a_right_b_wrong": 11, "b_right_a_wrong": 0}
    rows = {r["model_name"]: r for r in pd.read_parquet(files["leaderboard_parquet"]).to_dict("records") if r["model_name"]}  # fmt: skip
    assert (rows[good]["rank_best"], rows[poor]["rank_worst"]) == (1, 2)
    markdown = Path(files["leaderboard_markdown"]).read_text(encoding="utf-8")
    assert "## Paired comparisons" in markdown and "| 11 / 0 |" in markdown
    page = Path(files["html"]).read_text(encoding="utf-8")
    assert "<h2>Paired comparisons</h2>" in page


def test_runs_paired_across_folders_and_refused_across_versions(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(script()) as server:
        good, poor = f"openai/good@{server.base_url}", f"openai/poor@{server.base_url}"
        one = evaluate(tmp_path / "one", tsv, [good], mode="vanilla")
        two = evaluate(tmp_path / "two", tsv, [poor], mode="vanilla")
    assert one.comparisons == [] and "only one model" in one.comparison_notes[0]
    found = compare_runs([one, two])
    (c,) = found.comparisons
    assert (c.model_a, c.model_b, c.items) == (good, poor, 12)
    assert c.p_value == pytest.approx(P_11, rel=1e-12)
    assert not any("only one model" in n for n in found.notes), "paired across the runs"

    other = two.model_copy(deep=True)
    other.dataset.version = "v2"
    one.dataset.version = "v1"
    refused = compare_runs([one, other])
    assert refused.comparisons == []
    (why,) = [n for n in refused.notes if "not paired" in n]
    assert "different versions hold different questions" in why
    assert "version v1" in why and "version v2" in why


def test_the_card_states_the_smallest_detectable_difference():
    import math

    from benchfoundry.tasks.publish.card import detectable_difference, power_sentence

    d = detectable_difference(300)
    # Connor (1987) at psi = 0.2, two-sided 5%, 80% power: n = (z_a sqrt(psi) + z_b
    # sqrt(psi - d^2))^2 / d^2 gives back 300 questions
    z_a, z_b = 1.959963984540054, 0.8416212335729143
    assert (z_a * math.sqrt(0.2) + z_b * math.sqrt(0.2 - d * d)) ** 2 / d**2 == pytest.approx(300)
    assert "7.2 points or more with 80% power" in power_sentence(300)
    assert "on 20% of the questions" in power_sentence(300)
    assert detectable_difference(36) is None, "not even every disagreement one way"
    assert "too few questions to rank models" in power_sentence(36)
