"""The evaluate stage end to end against the local OpenAI-compatible test server with scripted
models: results exactly as scripted per category, a resume after kill -9 that repeats no call,
a model added later asked alone; the dataset readers on small files shaped like the real ones;
intervals and multi-modal gain and leakage on hand-computed cases."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchfoundry.core import progress
from benchfoundry.core.records import ResultRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.dataset import EvalDatasetError, load_eval_dataset
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.evaluate.stats import accuracy, clustered, gain_and_leakage, wilson
from tests.tasks.publish.test_publish import _options, publish
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture (a reviewed run)

REPO = Path(__file__).resolve().parents[3]


def write_tsv(path: Path, image_bytes) -> Path:
    """8 questions in VLMEvalKit's MCQ layout, two per image (the second row refers to the
    first's index): 'animals' name their right option '<k>-right'; 'counting' have answer A."""
    rows = []
    for i in range(8):
        animals = i < 4
        image = base64.b64encode(image_bytes(seed=i // 2)).decode() if i % 2 == 0 else str(i - 1)
        options = (
            [f"{i}-right", f"{i}-wrong1", f"{i}-wrong2", f"{i}-wrong3"]
            if animals
            else [str(i + 1), str(i + 2), str(i + 3), str(i + 4)]
        )
        rows.append(
            {
                "index": i,
                "image": image,
                "question": f"Question {i}: which one?",
                "hint": "Look closely." if i == 0 else "",
                "A": options[0], "B": options[1], "C": options[2], "D": options[3],
                "answer": "A",
                "category": "animals" if animals else "counting",
                "l2-category": "animals" if animals else "counting",
                "split": "dev",
            }
        )  # fmt: skip
    rows.append({**rows[0], "index": 8, "answer": "E"})  # refused: E is not an option
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def scripted() -> Script:
    """'good' names the right option's text when it can see one (every rotation right), else
    says 'A' (right only where the key is shown at A)."""

    def good(request) -> str:
        found = re.search(r"(\d+-right)", request.text)
        return found.group(1) if found else "A"

    return Script(rules=[Rule(good, model="good")], default="A")


def questions_asked(server: TestServer) -> int:
    """Requests that asked a question of the dataset (not the preflight's tiny one)."""
    return sum("Question" in json.dumps(b) for b in server.stats.bodies)


def evaluate(run: Path, dataset: Path, models: list[str], **options) -> object:
    stage = StageRun.make(run, evaluate=EvaluateOptions(dataset=dataset, models=models, **options))
    return STAGES["evaluate"].run(stage)


def test_results_are_exactly_as_scripted_per_category(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    done: dict[str, list[int]] = {}  # step -> [units reported done, the total it gives]

    def listener(step: str, advance: int, total: int | None) -> None:
        got = done.setdefault(step, [0, 0])
        got[0] += advance
        got[1] = total or got[1]

    with TestServer(scripted()) as server, progress.listening(listener):
        model = f"openai/good@{server.base_url}"
        summary = evaluate(tmp_path / "run", tsv, [model], batch_size=4)
        first = server.stats.requests
    assert done[f"evaluate {model}"] == [8, 8]  # progress counts each question once
    assert summary.dataset.format == "VLMEvalKit MCQ TSV" and summary.dataset.questions == 8
    assert summary.dataset.refused == {"answer_not_in_options": 1}
    (score,) = summary.scores
    assert (score.vanilla.correct, score.circular.correct) == (8, 4)
    assert score.by_category["animals"]["circular"].accuracy == 1.0
    assert score.by_category["counting"]["vanilla"].accuracy == 1.0
    assert score.by_category["counting"]["circular"].accuracy == 0.0
    # animals: 4 passes each; counting: stops at its second (wrong) pass
    assert first == score.calls_made == 4 * 4 + 4 * 2 and score.calls_if_every_pass == 32
    assert score.vanilla.clustered_low is not None, "questions share images: a clustered interval"
    assert summary.chance_vanilla == pytest.approx(0.25)
    assert summary.chance_circular == pytest.approx(0.25**4)
    stored = RunFolder(tmp_path / "run").table(ResultRecord).records()
    assert len(stored) == 24 and {r.model for r in stored} == {model}
    assert summary.report == str(tmp_path / "run" / "reports" / "evaluation" / "report.html")
    assert Path(summary.report).is_file()


def test_a_model_added_later_runs_alone_and_a_rerun_asks_nothing(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(scripted()) as server:
        good = f"openai/good@{server.base_url}"
        other = f"openai/other@{server.base_url}"
        evaluate(tmp_path / "run", tsv, [good])
        before = server.stats.requests
        summary = evaluate(tmp_path / "run", tsv, [good, other])
        by = {s.model: s for s in summary.scores}
        assert by[good].asked_now == 0 and by[good].reused == 8
        assert by[other].asked_now == 8
        assert server.stats.requests - before == by[other].calls_made
        again = server.stats.requests
        replayed = evaluate(tmp_path / "run", tsv, [good, other])
        assert server.stats.requests == again
        # nothing sent, so no call is counted as made (the stored answers are reused)
        assert [s.calls_made for s in replayed.scores] == [0, 0]


def test_evaluations_into_one_folder_add_up(tmp_path, image_bytes):
    """A later `evaluate` of other models into the same folder keeps the earlier ones on the
    board, the report and the comparisons; `report` over two runs shows chance once."""
    from benchfoundry.tasks.evaluate.leaderboard import write_report

    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(scripted()) as server:
        good = f"openai/good@{server.base_url}"
        other = f"openai/other@{server.base_url}"
        evaluate(tmp_path / "run", tsv, [good])
        before = server.stats.requests
        summary = evaluate(tmp_path / "run", tsv, [other])
        assert server.stats.requests - before == 16  # only the new model was asked
        evaluate(tmp_path / "second", tsv, [other])
    by = {s.model: s for s in summary.scores}
    assert set(by) == {good, other}
    assert by[good].circular.correct == 4 and by[good].asked_now == 0
    assert by[other].circular.correct == 0  # 'A' is right only where the key stands at A
    (pair,) = summary.comparisons
    assert {pair.model_a, pair.model_b} == {good, other}
    page = Path(summary.report).read_text(encoding="utf-8")
    assert good in page and other in page
    files = write_report([tmp_path / "run", tmp_path / "second"], tmp_path / "both")
    board = Path(files.leaderboard_markdown).read_text(encoding="utf-8")
    assert board.count("| chance (uniform guess) |") == 1


def test_a_killed_evaluation_resumes_without_repeating_a_call(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)
    run = tmp_path / "run"
    # The stage itself in a process of its own, killed after its first batch is stored (a CLI
    # process killed so would leave its Prefect server holding the pipes).
    script = (
        "import sys\n"
        "from benchfoundry.tasks.evaluate.options import EvaluateOptions\n"
        "from benchfoundry.pipeline.registry import STAGES, StageRun\n"
        "options = EvaluateOptions(dataset=sys.argv[2], models=[sys.argv[3]], batch_size=4)\n"
        "STAGES['evaluate'].run(StageRun.make(sys.argv[1], evaluate=options))\n"
    )
    with TestServer(scripted()) as server:
        model = f"openai/good@{server.base_url}"
        env = {**os.environ, "BENCHFOUNDRY_CRASH_AT": "evaluate.after_batch"}
        killed = subprocess.run(
            [sys.executable, "-c", script, str(run), str(tsv), model], env=env, cwd=REPO,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
        assert len({r.question_id for r in RunFolder(run).table(ResultRecord).records()}) == 4
        after_kill = questions_asked(server)
        done = subprocess.run(
            [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(run), "--dataset",
             str(tsv), "--model", model, "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    (score,) = summary["scores"]
    assert score["reused"] == 4 and score["asked_now"] == 4
    assert (score["vanilla"]["correct"], score["circular"]["correct"]) == (8, 4)
    # No answered call was asked twice across the kill: the only calls asked again are those
    # still in flight when the process was killed (an endpoint model's questions go side by
    # side, 4 at once, and a killed process never read those answers).
    assert 24 <= questions_asked(server) <= 24 + 4
    assert questions_asked(server) - after_kill == score["calls_made"]
    # besides them, the command's preflight asked the model one tiny question
    assert server.stats.requests == questions_asked(server) + 1


def test_gain_and_leakage_with_a_base_llm(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "bench.tsv", image_bytes)

    def vlm(request) -> str:  # right with the image; without it, right on animals only
        if request.n_images:
            found = re.search(r"(\d+-right)", request.text)
            return found.group(1) if found else "A"
        found = re.search(r"(\d+-right)", request.text)
        return found.group(1) if found else "D"

    script = Script(rules=[Rule(vlm, model="vlm")], default="D")  # the base LLM says D
    with TestServer(script) as server:
        vlm_name, base = f"openai/vlm@{server.base_url}", f"openai/base@{server.base_url}"
        summary = evaluate(tmp_path / "run", tsv, [vlm_name], base_llm=base, mode="vanilla")
    (gain,) = summary.gains
    # vanilla: with image 8/8; without 4/8 (counting: D is never the key); base LLM 0/8 (D)
    assert (gain.s_v, gain.s_wv, gain.s_t) == (1.0, 0.5, 0.0)
    assert (gain.mg, gain.ml) == (0.5, 0.5)
    assert gain.by_category["counting"] == {"mg": 1.0, "ml": 0.0}
    assert gain.by_category["animals"] == {"mg": 0.0, "ml": 1.0}
    assert {(s.model, s.with_image) for s in summary.scores} == {
        (vlm_name, True), (vlm_name, False), (base, False),
    }  # fmt: skip


def test_the_readers(tmp_path, image_bytes):
    import pyarrow as pa
    import pyarrow.parquet as pq

    tsv = load_eval_dataset(write_tsv(tmp_path / "b.tsv", image_bytes))
    assert tsv.format == "tsv" and len(tsv.questions) == 8
    q0 = tsv.questions[0].item
    assert q0.hint == "Look closely." and q0.options[0] == "0-right" and q0.category == "animals"
    assert tsv.questions[1].image_id == tsv.questions[0].image_id, "the row refers to index 0"
    table = pa.table(
        {
            "index": [0, 1],
            "question": ["How many?\nOptions: A: 2, B: 3", "Which colour?\nOptions: A: red, B: blue"],
            "image": [{"bytes": image_bytes(seed=1), "path": "a.png"}] * 2,
            "answer": ["B", "A"],
            "category": ["counting", "colour"], "l2_category": ["c", "k"],
        }
    )  # fmt: skip
    pq.write_table(table, tmp_path / "mmstar.parquet")
    parquet = load_eval_dataset(tmp_path / "mmstar.parquet")
    assert parquet.format == "parquet" and [q.item.options for q in parquet.questions] == [
        ("2", "3"), ("red", "blue"),
    ]  # fmt: skip
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(EvalDatasetError, match="expected a release folder"):
        load_eval_dataset(tmp_path / "notes.txt")
    (tmp_path / "mmvet").mkdir()
    (tmp_path / "mmvet" / "mm-vet.json").write_text("{}", encoding="utf-8")
    with pytest.raises(EvalDatasetError, match="no questions to ask"):  # an empty MM-Vet set
        load_eval_dataset(tmp_path / "mmvet")
    pd.DataFrame({"index": [0], "question": ["q"]}).to_csv(tmp_path / "bad.tsv", sep="\t")
    with pytest.raises(EvalDatasetError, match="answer"):
        load_eval_dataset(tmp_path / "bad.tsv")


def test_a_release_is_read_with_its_version(run, tmp_path):  # noqa: F811  (the fixture)
    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    dataset = load_eval_dataset(tmp_path / "releases" / "bench")  # its `latest`
    assert dataset.format == "release" and dataset.version == summary.version
    assert len(dataset.questions) == summary.rows
    assert dataset.questions[0].item.image[:4] == b"\x89PNG"


def test_intervals_and_gain_on_hand_computed_cases():
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)
    # two images, two questions each: (1, 1) and (1, 0): p = 0.75; residuals 0.5 and -0.5;
    # variance = (0.25 + 0.25) / 16 * 2 = 0.0625, half-width 1.96 * 0.25 = 0.49
    lo, hi = clustered([("a", True), ("a", True), ("b", True), ("b", False)])
    assert (round(lo, 3), round(hi, 3)) == (0.26, 1.0)
    assert clustered([("a", True), ("a", False)]) is None
    a = accuracy([("a", True), ("b", False)])
    assert a.accuracy == 0.5 and a.clustered_low is None, "no image shared: Wilson only"
    assert gain_and_leakage(0.6, 0.4, 0.5) == pytest.approx((0.2, 0.0))
    assert gain_and_leakage(0.6, 0.5, 0.3) == pytest.approx((0.1, 0.2))
