"""Open-ended evaluation (MM-Vet) end to end against the local test server: a scripted model
answers, a scripted grader replies with good, malformed, out-of-range and empty grades; scores
per capability and integration as mean ± std over the gradings, computed by hand; the k
gradings are k separate calls and a rerun makes none; the MM-Vet folder and VLMEvalKit MMVet TSV
readers on small files shaped like the real ones."""

from __future__ import annotations

import base64
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchfoundry.answering.open_ended import parse_grade
from benchfoundry.core.records import ResultRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.dataset import EvalDatasetError, load_eval_dataset
from benchfoundry.tasks.evaluate.options import EvaluateOptions

REPO = Path(__file__).resolve().parents[3]
EVIL = "n/a <script>alert(1)</script>"


def write_mmvet(folder: Path, image_bytes) -> Path:
    """MM-Vet's release layout: mm-vet.json beside images/; one entry's image is missing and
    one has no question."""
    (folder / "images").mkdir(parents=True)
    entries = {
        "v1_0": (["rec"], "Q0: which animal is this?", "cat"),
        "v1_1": (["ocr"], "Q1: what does the sign say?", "OPEN<OR>open now"),
        "v1_2": (["ocr", "spat"], "Q2: which word is left of the red sign?", "exit<AND>left"),
        "v1_3": (["rec", "know"], "Q3: what breed is the dog, and where is it from?", "corgi"),
    }
    data = {}
    for i, (key, (capability, question, answer)) in enumerate(entries.items()):
        (folder / "images" / f"{key}.png").write_bytes(image_bytes(seed=i))
        data[key] = {
            "imagename": f"{key}.png",
            "capability": capability,
            "question": question,
            "answer": answer,
        }
    data["v1_4"] = {
        "imagename": "gone.png",
        "capability": ["rec"],
        "question": "Q4?",
        "answer": "x",
    }
    data["v1_5"] = {"imagename": "v1_0.png", "capability": ["rec"], "answer": "no question"}
    (folder / "mm-vet.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def grader_script() -> Script:
    """The model answers 'my answer to Qn'. The grader, by question n, grading (the seed) and
    try: Q0 1.0; Q1 0.5 / 1.0 / 0.0 / 0.5... by grading; Q2 a sentence, then 0.8 on the
    follow-up; Q3's first grading 1.5, then empty, then an unreadable reply; its others 0.0."""

    def vlm(request) -> str:
        return "my answer to " + re.search(r"(Q\d)", request.text).group(1)

    def grader(request) -> str:
        n = int(re.findall(r"my answer to Q(\d)", request.text)[-1])
        k = request.body["seed"]
        tries = "Your previous reply" in request.text
        if n == 0:
            return "1.0"
        if n == 1:
            return ["0.5", "1.0", "0.0"][k] if k < 3 else "0.5"
        if n == 2:
            return "0.8" if tries else "The answer is mostly right."
        if k == 0:  # each follow-up quotes the reply before it
            return "" if "was: 1.5" in request.text else EVIL if tries else "1.5"
        return "0.0"

    return Script(rules=[Rule(vlm, model="vlm"), Rule(grader, model="grader")], default="?")


def evaluate(run: Path, dataset: Path, models: list[str], **options):
    stage = StageRun.make(run, evaluate=EvaluateOptions(dataset=dataset, models=models, **options))
    return STAGES["evaluate"].run(stage)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("0.5", 0.5), ("1.0", 1.0), (" 0", 0.0), ("1", 1.0), (".7", 0.7), ("0.8.", 0.8),
        ("0.6 — partly right", 0.6), ("**0.4**", 0.4), ("0.3\nbecause", 0.3),
        ("1.5", None), ("-0.2", None), ("", None), (None, None), ("The score is 0.5", None),
        ("0.5abc", None), ("n/a", None), ("10", None),
    ],
)  # fmt: skip
def test_a_grade_is_read_strictly(reply, score):
    value, why = parse_grade(reply)
    assert value == score
    assert (why is None) == (score is not None)


def test_the_mmvet_reader(tmp_path, image_bytes):
    dataset = load_eval_dataset(write_mmvet(tmp_path / "mm-vet", image_bytes))
    assert dataset.format == "mmvet" and dataset.open_ended and dataset.size == 4
    assert dataset.refused == {"missing_field": 1, "missing_image": 1}
    q2 = dataset.open_questions[2]
    assert (q2.source_id, q2.capabilities, q2.integration) == ("v1_2", ("ocr", "spat"), "ocr_spat")
    assert q2.answer == "exit<AND>left"


def test_the_vlmevalkit_mmvet_tsv_reader(tmp_path, image_bytes):
    encoded = base64.b64encode(image_bytes(seed=3)).decode()
    rows = [
        {"index": 0, "image": encoded, "question": "What is written?", "answer": "STOP",
         "category": "ocr"},
        {"index": 1, "image": "0", "question": "Where is the sign?", "answer": "left<OR>west",
         "category": "rec,spat"},  # the image of row 0
        {"index": 2, "image": "not base64 at all!", "question": "Q?", "answer": "a",
         "category": "rec"},
        {"index": 3, "image": encoded, "question": "", "answer": "a", "category": "rec"},
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "MMVet.tsv", sep="\t", index=False)
    dataset = load_eval_dataset(tmp_path / "MMVet.tsv")
    assert dataset.format == "mmvet_tsv" and dataset.size == 2
    assert dataset.refused == {"missing_field": 1, "not_base64": 1}
    first, second = dataset.open_questions
    assert second.image == first.image and second.capabilities == ("rec", "spat")
    assert second.integration == "rec_spat" and second.source_id == "1"


def test_open_ended_scores_failures_and_replays(tmp_path, image_bytes):
    folder = write_mmvet(tmp_path / "mm-vet", image_bytes)
    run = tmp_path / "run"
    with TestServer(grader_script()) as server:
        vlm, grader = f"openai/vlm@{server.base_url}", f"openai/grader@{server.base_url}"
        summary = evaluate(run, folder, [vlm], judge=grader, gradings=3, batch_size=2)
        # 4 answers; gradings: Q0 3, Q1 3, Q2 3 x 2 tries, Q3 5 (3 tries, then 2 single)
        assert server.stats.requests == 4 + 17
        assert server.stats.by_model["grader"] == 17
        (score,) = summary.open_scores
        assert (score.answer_calls, score.grading_calls, score.gradings) == (4, 17, 3)
        # per grading run, the mean over the questions graded in it
        runs = [(1 + 0.5 + 0.8) / 3, (1 + 1 + 0.8 + 0) / 4, (1 + 0 + 0.8 + 0) / 4]
        assert score.total.runs == pytest.approx(runs)
        assert score.total.mean == pytest.approx(statistics.fmean(runs))
        assert score.total.std == pytest.approx(statistics.pstdev(runs))
        assert score.by_capability["rec"].runs == pytest.approx([1.0, 0.5, 0.5])
        assert score.by_capability["ocr"].mean == pytest.approx(statistics.fmean([0.65, 0.9, 0.4]))
        assert score.by_capability["know"].runs == pytest.approx([0.0, 0.0])
        assert score.by_integration["ocr"].std == pytest.approx(statistics.pstdev([0.5, 1, 0]))
        assert score.by_integration["ocr_spat"].mean == pytest.approx(0.8)
        assert set(score.by_integration) == {"rec", "ocr", "ocr_spat", "know_rec"}
        # the failed grading: recorded with its raw reply and why, never a silent 0
        (failure,) = score.failures
        assert (failure.source_id, failure.grading, failure.reply) == ("v1_3", 0, EVIL)
        assert "outside [0, 1]" in failure.why and "empty reply" in failure.why
        stored = RunFolder(run).table(ResultRecord).records()
        assert len(stored) == 12
        failed = [r for r in stored if r.score is None]
        assert len(failed) == 1 and failed[0].extracted_by == "grading_failed"
        assert failed[0].grader_reply == EVIL and failed[0].response == "my answer to Q3"
        assert summary.mode == "open" and summary.chance_vanilla is None
        assert summary.dataset.refused == {"missing_field": 1, "missing_image": 1}
        # a rerun replays nothing; more gradings ask only the new ones, no answer again
        before = server.stats.requests
        again = evaluate(run, folder, [vlm], judge=grader, gradings=3)
        assert server.stats.requests == before
        assert again.open_scores[0].total == score.total
        more = evaluate(run, folder, [vlm], judge=grader, gradings=4)
        assert server.stats.requests - before == 1 + 1 + 2 + 1
        assert more.open_scores[0].answer_calls == 0
        assert len(more.open_scores[0].total.runs) == 4
    html = Path(summary.report).read_text(encoding="utf-8")
    assert "scores per capability" in html and "ocr_spat" in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_open_ended_sets_need_a_grader_and_answering_models(tmp_path, image_bytes):
    folder = write_mmvet(tmp_path / "mm-vet", image_bytes)
    with pytest.raises(EvalDatasetError, match="give the grader"):
        evaluate(tmp_path / "run", folder, ["facts-smollm2"])
    with pytest.raises(EvalDatasetError, match="multiple-choice questions only"):
        evaluate(tmp_path / "run", folder, ["blind-random"], judge="facts-smollm2")


def test_the_command_prints_totals_by_capability(tmp_path, image_bytes):
    folder = write_mmvet(tmp_path / "mm-vet", image_bytes)
    run = tmp_path / "run"
    with TestServer(grader_script()) as server:
        vlm, grader = f"openai/vlm@{server.base_url}", f"openai/grader@{server.base_url}"
        done = subprocess.run(
            [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(run), "--dataset",
             str(folder), "--model", vlm, "--judge", grader, "--gradings", "2", "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        summary = json.loads(done.stdout)
        (score,) = summary["open_scores"]
        assert set(score["total"]) >= {"mean", "std", "runs"}
        assert set(score["by_capability"]) == {"rec", "ocr", "know", "spat"}
        assert summary["dataset"]["format"] == "MM-Vet open-ended set"
        reported = subprocess.run(
            [sys.executable, "-m", "benchfoundry", "report", str(run), "--to",
             str(tmp_path / "board"), "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert reported.returncode == 0, reported.stderr[-2000:]
    files = json.loads(reported.stdout)
    assert any(p.endswith("capabilities.png") for p in files["plots"])
    board = pd.read_parquet(files["leaderboard_parquet"])
    assert list(board["metric"]) == ["mm-vet"] and board["score_std"].notna().all()


def test_a_chinese_open_ended_question_is_graded_in_chinese(tmp_path, image_bytes):
    """An MM-Vet set with a Chinese question: that question is graded with the Chinese form of
    MM-Vet's scheme (and a malformed grade is followed up in Chinese), the English ones as
    before, over HTTP; the text measure that tells them apart."""
    from benchfoundry.core.text import text_language

    assert text_language("图中的招牌上写着什么？") == "zh"
    assert text_language("招牌上写的 OPEN 是什么意思？") == "zh"
    assert text_language("What does the sign reading 福 mean?") == "en"
    folder = tmp_path / "mm-vet"
    (folder / "images").mkdir(parents=True)
    entries = {
        "v1_0": (["rec"], "Q0: which animal is this?", "cat"),
        "v1_1": (["ocr"], "Q1：图中的招牌上写着什么？", "营业中<OR>开门"),
    }
    data = {}
    for i, (key, (capability, question, answer)) in enumerate(entries.items()):
        (folder / "images" / f"{key}.png").write_bytes(image_bytes(seed=i))
        data[key] = {"imagename": f"{key}.png", "capability": capability, "question": question,
                     "answer": answer}  # fmt: skip
    (folder / "mm-vet.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    prompts: dict[str, list[str]] = {"Q0": [], "Q1": []}

    def grader(request) -> str:
        n = re.findall(r"my answer to (Q\d)", request.text)[-1]
        prompts[n].append(request.text)
        return "0.7" if len(prompts[n]) > 1 else ("1.0" if n == "Q0" else "分数是 0.7")

    def vlm(request) -> str:
        return "my answer to " + re.search(r"(Q\d)", request.text).group(1)

    script = Script(rules=[Rule(vlm, model="vlm"), Rule(grader, model="grader")], default="?")
    with TestServer(script) as server:
        summary = evaluate(
            tmp_path / "run", folder, [f"openai/vlm@{server.base_url}"],
            judge=f"openai/grader@{server.base_url}", gradings=1,
        )  # fmt: skip
    (english,) = prompts["Q0"]
    first, followup = prompts["Q1"]
    assert "correctness score" in english and "标准答案" not in english
    assert "标准答案" in first and "营业中 <OR> 开门" in first and "correctness" not in first
    assert "你上一次对此的回复是：分数是 0.7" in followup
    assert summary.open_scores[0].total.mean == pytest.approx((1.0 + 0.7) / 2)


def test_an_answer_call_that_fails_scores_zero_and_is_counted(tmp_path, image_bytes):
    """A question whose answer call failed is a 0 over the whole set, not left out."""
    from benchfoundry.devtools.testserver import Refusal

    folder = write_mmvet(tmp_path / "mm-vet", image_bytes)
    refused = Rule(Refusal(400, "At most 1 image(s) may be provided"), model="vlm", pattern="Q0")
    script = Script(rules=[refused, Rule(lambda r: "my answer", model="vlm")], default="1.0")
    with TestServer(script) as server:
        vlm, grader = f"openai/vlm@{server.base_url}", f"openai/grader@{server.base_url}"
        summary = evaluate(tmp_path / "run", folder, [vlm], judge=grader, gradings=2)
    (score,) = summary.open_scores
    assert score.unanswered == 1 and score.questions == 3  # Q1-Q3 graded 1.0, Q0 failed
    assert score.total.mean == pytest.approx(3 / 4)
    assert score.by_capability["rec"].mean == pytest.approx(1 / 2)  # Q0 (failed) and Q3
    assert summary.incomplete() is not None
