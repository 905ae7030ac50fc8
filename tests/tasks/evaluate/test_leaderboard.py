"""`benchfoundry report`: the leaderboard of evaluation runs as Parquet and Markdown, plots and
one self-contained HTML page that escapes what comes from the data; chance always on the board."""

from __future__ import annotations

import base64
import json
import re

import pandas as pd
import pyarrow.parquet as pq
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import ResultRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.storage.tables import RunFolder
from tests.tasks.evaluate.test_evaluate import evaluate, scripted, write_tsv

MISKEYED = 5  # its key names a wrong option


def test_report_of_a_scripted_evaluation(tmp_path, image_bytes):
    tsv = write_tsv(tmp_path / "b<i>x.tsv", image_bytes)  # a name that is markup
    with TestServer(scripted()) as server:
        good = f"openai/good@{server.base_url}"
        evaluate(tmp_path / "run", tsv, [good, "blind/random"], base_llm="blind/letter-A")
    result = CliRunner().invoke(
        app, ["report", str(tmp_path / "run"), "--to", str(tmp_path / "out"), "--json"]
    )
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)
    rows = pq.read_table(files["leaderboard_parquet"]).to_pylist()
    by = {r["model"]: r for r in rows}
    assert by["chance (uniform guess)"]["kind"] == "chance"
    assert by["chance (uniform guess)"]["vanilla"] == 0.25
    model = by[f"{good} (sees the image)"]
    assert (model["vanilla"], model["circular"], model["circular_drop"]) == (1.0, 0.5, 0.5)
    # it reads the right option without the image too: no gain, and all of it leaks (letter-A: 0)
    assert model["mg"] == 0.0 and model["ml"] == 0.5
    assert rows[-1]["kind"] == "chance", "chance is last on the board"
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "b&lt;i&gt;x" in page and "<i>x" not in page
    assert page.count("data:image/png;base64,") == len(files["plots"]) >= 2
    assert "http://" not in page.replace(server.base_url, ""), "no CDN, nothing fetched"
    markdown = (tmp_path / "out" / "leaderboard.md").read_text(encoding="utf-8")
    assert "| chance (uniform guess) |" in markdown
    # The response matrix: every stored pass, as the results table holds it, for re-scoring.
    matrix = pq.read_table(files["responses"])
    stored = RunFolder(tmp_path / "run").table(ResultRecord).read()
    assert files["response_rows"] == matrix.num_rows == stored.num_rows > 0
    assert matrix.column_names == [
        "run", "run_id", "model", "question_id", "pass_index", "option_order", "response",
        "extracted", "extracted_by", "correct", "score",
    ]  # fmt: skip
    passes = {(r["model"], r["question_id"], r["pass_index"]): r for r in matrix.to_pylist()}
    for row in stored.to_pylist():
        mine = passes[(row["model"], row["question_id"], row["pass_index"])]
        assert (mine["response"], mine["extracted"], mine["correct"]) == (
            row["response"], row["extracted"], row["correct"],
        )  # fmt: skip
    assert {r["run"] for r in matrix.to_pylist()} == {str(tmp_path / "run")}


def test_report_of_a_folder_with_no_evaluation(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 1 and "holds no evaluation" in result.output


def _tsv(path, image_bytes):
    """12 questions, difficulty 1-6 (two each); question 5's key names a wrong option."""
    rows = []
    for i in range(12):
        options = [f"{i}-right", f"{i}-lure", f"{i}-wrong2", f"{i}-wrong3"]
        rows.append(
            {
                "index": i,
                "image": base64.b64encode(image_bytes(seed=i)).decode(),
                "question": f"Question {i} (level {i // 2 + 1}): which one?",
                "A": options[0], "B": options[1], "C": options[2], "D": options[3],
                "answer": "B" if i == MISKEYED else "A",
                "category": "things",
            }
        )  # fmt: skip
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _levels() -> Script:
    """Model `m<k>` names the right option's text up to level k, and the lure above it."""

    def answer(request) -> str:
        k = int(request.model[1:])
        level, number = re.search(r"Question (\d+) \(level (\d+)\)", request.text).group(2, 1)
        return f"{number}-right" if int(level) <= k else f"{number}-lure"

    return Script(rules=[Rule(answer)])


def test_report_flags_the_miskeyed_question(tmp_path, image_bytes):
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(_levels()) as server:
        models = [f"openai/m{k}@{server.base_url}" for k in range(1, 7)]
        evaluate(tmp_path / "run", tsv, models, mode="vanilla")
    result = CliRunner().invoke(
        app, ["report", str(tmp_path / "run"), "--to", str(tmp_path / "out"), "--json"]
    )
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)
    (analysis,) = files["item_analysis"]
    assert analysis["fitted"] and len(analysis["respondents"]) == 6
    abilities = [r["ability"] for r in analysis["respondents"]]
    assert abilities == sorted(abilities), "m1 to m6: abilities in the order of their levels"
    assert [s["index"] for s in analysis["suspects"]] == [str(MISKEYED)]
    items = {r["index"]: r for r in pq.read_table(files["items"]).to_pylist()}
    assert sorted(items, key=int) == [str(i) for i in range(12)]
    bad = items[str(MISKEYED)]
    assert bad["suspect"] and bad["discrimination"] < 0 and bad["respondents"] == 6
    assert "able respondents fail it" in bad["why"]
    assert items["11"]["difficulty"] > items["0"]["difficulty"]
    assert not any(r["suspect"] for i, r in items.items() if i != str(MISKEYED))
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Suspect items" in page
    assert "1 suspect" in (tmp_path / "out" / "leaderboard.md").read_text(encoding="utf-8")
    # A new model asked only 4 anchors chosen from this analysis: its accuracy on all 12 is
    # estimated (m4: levels 1-4 right, but the miskeyed question wrong: 7 of 12).
    with TestServer(_levels()) as server:
        result = CliRunner().invoke(
            app,
            ["evaluate", "--out", str(tmp_path / "new"), "--dataset", str(tsv), "--mode",
             "vanilla", "--model", f"openai/m4@{server.base_url}", "--subset", "anchors:4",
             "--items", str(tmp_path / "out" / "items.parquet"), "--json"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        # the anchors only, after the command's one tiny question to the model
        assert server.stats.requests == 1 + 4, "the anchors only"
    summary = json.loads(result.stdout)
    (estimate,) = summary["anchors"]
    assert (estimate["anchors"], estimate["items"]) == (4, 12)
    assert estimate["low"] <= 7 / 12 <= estimate["high"]
    assert summary["scores"][0]["questions"] == 4


def test_too_few_respondents_get_counts_and_a_note(tmp_path, image_bytes):
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes)
    with TestServer(_levels()) as server:
        evaluate(tmp_path / "run", tsv, [f"openai/m3@{server.base_url}"], mode="vanilla")
    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    (analysis,) = json.loads(result.stdout)["item_analysis"]
    assert not analysis["fitted"] and "1 respondent (models, or a model" in analysis["note"]
    assert "and it needs 5" in analysis["note"]
    # one run: its report is the one evaluate wrote, made again in place (no second copy)
    rows = pq.read_table(tmp_path / "run" / "reports" / "evaluation" / "items.parquet").to_pylist()
    assert not (tmp_path / "run" / "reports" / "items.parquet").exists()
    assert len(rows) == 12 and {r["respondents"] for r in rows} == {1}
    assert all(r["difficulty"] is None and not r["suspect"] for r in rows)
