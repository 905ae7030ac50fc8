"""The image-swap probe against the local test server: a scripted model that answers from the
question's text alone stays right with another question's image and is flagged; one that is
right only with the right image (it recognises the image by its bytes) is not. The probe's
answers are stored under their own configuration and resume; the derangement gives no question
its own image; the exact test matches scipy's; unknown probe names and a single image are said
plainly."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re

import pandas as pd
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import ResultRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.dataset import load_eval_dataset
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.evaluate.probes import above_chance_p, swap_map, swapped_questions
from tests.tasks.evaluate.test_evaluate import evaluate

QUESTIONS, IMAGES = 12, 6


def write_shapes(path, image_bytes, images: int = IMAGES):
    """QUESTIONS questions, two per image, each asking which shape its image shows: the right
    option is `shape-<image>` (at a letter that moves from question to question), the others
    other words. The question's text says nothing of its image."""
    rows = []
    for i in range(QUESTIONS):
        seed = i // 2 % images
        first = i == 0 or (images > 1 and i % 2 == 0)
        refers = "0" if images == 1 else str(i - 1)
        image = base64.b64encode(image_bytes(seed=seed)).decode() if first else refers
        options = [f"{w}-{seed}" for w in ("ring", "cross", "star")]
        options.insert(i % 4, f"shape-{seed}")
        rows.append(
            {
                "index": i,
                "image": image,
                "question": f"Question {i}: which shape is drawn?",
                "A": options[0], "B": options[1], "C": options[2], "D": options[3],
                "answer": "ABCD"[i % 4],
                "category": "shapes",
            }
        )  # fmt: skip
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _image_hash(request) -> str | None:
    for message in request.body.get("messages", []):
        for part in message.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                return hashlib.sha256(base64.b64decode(data)).hexdigest()
    return None


def shape_script(tsv) -> Script:
    """'reader' names the right shape from the question's number (it never looks); 'looker'
    names the shape of the image it is sent (right only with the question's own image)."""
    questions = load_eval_dataset(tsv).questions
    right = {q.item.question.split(":")[0]: q.item.options["ABCD".index(q.item.answer)]
             for q in questions}  # fmt: skip
    shown = {}
    for q in questions:
        shown[hashlib.sha256(q.item.image).hexdigest()] = q.item.options[
            "ABCD".index(q.item.answer)
        ]

    def reader(request) -> str:
        return right[re.search(r"(Question \d+)", request.text).group(1)]

    def looker(request) -> str:
        return shown.get(_image_hash(request) or "", "I cannot tell")

    return Script(rules=[Rule(reader, model="reader"), Rule(looker, model="looker")])


def test_a_model_that_reads_the_question_is_flagged_and_a_looking_one_is_not(tmp_path, image_bytes):
    tsv = write_shapes(tmp_path / "shapes.tsv", image_bytes)
    with TestServer(shape_script(tsv)) as server:
        reader, looker = f"openai/reader@{server.base_url}", f"openai/looker@{server.base_url}"
        models = [reader, looker, "blind-longest"]
        summary = evaluate(tmp_path / "run", tsv, models, probes=["image-swap"])
        asked = server.stats.requests
        again = evaluate(tmp_path / "run", tsv, models, probes=["image-swap"])
        assert server.stats.requests == asked, "the probe's answers are stored and reused"
    by = {p.model: p for p in summary.probes}
    assert set(by) == {reader, looker}, "the blind baselines see nothing either way"
    assert by[reader].above_chance and by[reader].swapped.accuracy == 1.0
    assert by[reader].normal == 1.0 and by[reader].gap == 0.0
    assert by[reader].chance == pytest.approx(0.25**4) and by[reader].metric == "circular"
    assert by[reader].p_value == pytest.approx((0.25**4) ** QUESTIONS)
    assert not by[looker].above_chance and by[looker].p_value == 1.0
    assert (by[looker].normal, by[looker].swapped.accuracy, by[looker].gap) == (1.0, 0.0, 1.0)
    assert by[looker].questions == QUESTIONS
    assert [p.reused for p in again.probes] == [QUESTIONS, QUESTIONS]

    # the real scores are as if no probe had run: the probe has its own run_id
    scores = {s.model: s for s in summary.scores}
    assert scores[looker].circular.accuracy == 1.0 and scores[looker].questions == QUESTIONS
    stored = RunFolder(tmp_path / "run").table(ResultRecord).records()
    real_ids = {s.run_id for s in summary.scores}
    assert {r.run_id for r in stored} == real_ids | {by[reader].run_id}
    assert by[reader].run_id not in real_ids and by[reader].run_id == by[looker].run_id

    text = "\n".join(summary.lines())
    sentence = f"{reader} stays above chance with another question's image"
    assert sentence in text and "answers without looking" in text
    assert f"{looker} stays above chance" not in text
    markdown = summary.markdown()
    assert "| model | metric | own image | swapped [95% CI] |" in markdown and sentence in markdown
    report = tmp_path / "run" / "reports" / "evaluation"  # the run's own report shows it too
    assert sentence in (report / "leaderboard.md").read_text(encoding="utf-8")
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "Probes of looking" in page and html.escape(sentence) in page
    dumped = json.loads(summary.model_dump_json())  # what --json prints
    assert {p["model"]: p["above_chance"] for p in dumped["probes"]} == {
        reader: True,
        looker: False,
    }


def test_vanilla_uses_its_metric_and_chance(tmp_path, image_bytes):
    tsv = write_shapes(tmp_path / "shapes.tsv", image_bytes)
    with TestServer(shape_script(tsv)) as server:
        reader = f"openai/reader@{server.base_url}"
        summary = evaluate(tmp_path / "run", tsv, [reader], probes=["image-swap"], mode="vanilla")
    (probe,) = summary.probes
    assert probe.metric == "vanilla" and probe.chance == pytest.approx(0.25)
    assert probe.p_value == pytest.approx(0.25**QUESTIONS)


def test_the_swap_is_a_seeded_derangement():
    ids = [f"img{i}" for i in range(50)]
    to = swap_map(ids)
    assert sorted(to) == sorted(to.values()) == sorted(ids), "a permutation of the images"
    assert all(a != b for a, b in to.items()), "no image keeps its own"
    assert swap_map(reversed(ids)) == to, "fixed: the order given does not matter"
    assert swap_map(["only"]) == {}
    # adding an image changes one image's partner only
    more = swap_map([*ids, "img-new"])
    assert sum(more[a] != b for a, b in to.items()) == 1


def test_swapped_questions_keep_their_ids_and_never_their_image(tmp_path, image_bytes):
    dataset = load_eval_dataset(write_shapes(tmp_path / "shapes.tsv", image_bytes))
    swapped = swapped_questions(dataset.questions)
    for before, after in zip(dataset.questions, swapped, strict=True):
        assert after.item.question_id == before.item.question_id
        assert after.item.image != before.item.image and after.image_id != before.image_id


def test_the_exact_test_against_chance():
    assert above_chance_p(7, [0.25] * 20) == pytest.approx(
        binomtest(7, 20, 0.25, alternative="greater").pvalue
    )
    # unequal option counts: the Poisson-binomial tail, by hand for two questions
    assert above_chance_p(2, [0.5, 0.25]) == pytest.approx(0.125)
    assert above_chance_p(1, [0.5, 0.25]) == pytest.approx(1 - 0.5 * 0.75)
    assert above_chance_p(0, [0.5, 0.25]) == 1.0


def test_unknown_probes_name_the_known_ones_and_need_images():
    with pytest.raises(ValueError, match=r"unknown probe 'look-twice'; known probes: image-swap"):
        EvaluateOptions(probes=["look-twice"])
    with pytest.raises(ValueError, match="need the images shown"):
        EvaluateOptions(probes=["image-swap"], with_image=False)
    assert EvaluateOptions(probes=["image-swap", "image-swap"]).probes == ["image-swap"]


def test_the_command_refuses_an_unknown_probe(tmp_path):
    result = CliRunner().invoke(
        app,
        ["evaluate", "--out", str(tmp_path / "run"), "--dataset", str(tmp_path / "x.tsv"),
         "--model", "blind-random", "--probe", "look-twice"],
    )  # fmt: skip
    assert result.exit_code != 0
    assert "unknown probe 'look-twice'; known probes: image-swap" in result.output


def test_a_single_image_is_noted_not_probed(tmp_path, image_bytes):
    tsv = write_shapes(tmp_path / "one.tsv", image_bytes, images=1)
    with TestServer(shape_script(tsv)) as server:
        summary = evaluate(
            tmp_path / "run", tsv, [f"openai/reader@{server.base_url}"], probes=["image-swap"]
        )
    assert summary.probes == [] and len(summary.scores) == 1
    (note,) = summary.probe_notes
    assert "single image" in note and note in "\n".join(summary.lines())
