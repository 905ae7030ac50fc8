"""`benchfoundry report`: the leaderboard of evaluation runs as Parquet and Markdown, plots and
one self-contained HTML page that escapes what comes from the data; chance always on the board."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.core.records import ResultRecord
from benchfoundry.devtools.testserver import TestServer
from benchfoundry.storage.tables import RunFolder
from tests.tasks.evaluate.test_evaluate import evaluate, scripted, write_tsv


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
