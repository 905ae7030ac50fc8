"""Rescoring VLMEvalKit-style prediction files end to end, through the command line."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.devtools.testserver import Rule, Script, TestServer

OFFSET = 1_000_000


def _frame():
    rows = [
        # question 1, right in both circular copies
        (1, "Which animal barks?", "cat", "dog", "", "B", "The answer is B.", "animals"),
        (1 + OFFSET, "Which animal barks?", "dog", "cat", "", "A", "A", "animals"),
        # question 2, right first, wrong in the copy
        (2, "How many legs has a bird?", "2", "4", "6", "A", "2", "counting"),
        (2 + OFFSET, "How many legs has a bird?", "4", "6", "2", "C", "B", "counting"),
        (2 + 2 * OFFSET, "How many legs has a bird?", "6", "2", "4", "B", "2 legs", "counting"),
        # question 3, undecided without a judge
        (3, "Which is a colour?", "blue", "seven", "", "A", "Either A or B.", "animals"),
    ]
    return pd.DataFrame(
        rows, columns=["index", "question", "A", "B", "C", "answer", "prediction", "category"]
    )


@pytest.mark.parametrize("suffix", [".tsv", ".xlsx", ".csv", ".parquet"])
def test_score_command_reads_every_format(tmp_path, suffix):
    path = tmp_path / f"model_MMBench{suffix}"
    frame = _frame()
    {
        ".tsv": lambda: frame.to_csv(path, sep="\t", index=False),
        ".csv": lambda: frame.to_csv(path, index=False),
        ".xlsx": lambda: frame.to_excel(path, index=False),
        ".parquet": lambda: frame.to_parquet(path),
    }[suffix]()
    out = tmp_path / "rows.parquet"
    result = CliRunner().invoke(app, ["score", str(path), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)["scores"]
    assert scores["questions"] == 3 and scores["rows"] == 6
    assert scores["vanilla_accuracy"] == pytest.approx(2 / 3)
    assert scores["circular_accuracy"] == pytest.approx(1 / 3)
    assert scores["by_category"]["counting"] == {"questions": 1, "vanilla": 1.0, "circular": 0.0}
    assert scores["extracted_by"] == {"heuristic": 5, "none": 1}
    rows = pd.read_parquet(out)
    assert list(rows["index"]) == list(frame["index"])
    assert list(rows["extracted"]) == ["B", "A", "A", "B", "B", "Z"]
    assert list(rows["hit"]) == [True, True, True, False, True, False]
    assert {"index", "extracted", "extracted_by", "hit"} <= set(rows.columns)


def test_score_with_a_judge_reads_the_undecided_and_a_rerun_replays_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "p.tsv"
    _frame().to_csv(path, sep="\t", index=False)
    with TestServer(Script(rules=[Rule("A", pattern="Either A or B")], default="Z")) as server:
        args = ["score", str(path), "--judge", f"openai/judge@{server.base_url}", "--json"]
        result = CliRunner().invoke(app, args)
        assert server.stats.requests == 1, "only the undecided row went to the judge"
        again = CliRunner().invoke(app, args)
        assert server.stats.requests == 1, "the rerun replays the judge's answer from the cache"
        text = CliRunner().invoke(app, args[:-1])
        assert server.stats.requests == 1
    payload = json.loads(result.stdout)
    assert payload["scores"]["extracted_by"] == {"heuristic": 5, "llm": 1}
    assert payload["rows"][-1]["extracted"] == "A" and payload["rows"][-1]["hit"]
    cache = tmp_path / "cache" / "benchfoundry" / "judge_cache.sqlite"
    assert payload["judge"]["calls"] == 1 and payload["judge"]["cache"] == str(cache)
    replay = json.loads(again.stdout)
    assert replay["judge"]["cached"] == 1 and replay["scores"] == payload["scores"]
    assert (
        f"judge openai/judge@{server.base_url}: 1 calls (1 from the cache {cache})" in text.output
    )


def test_score_keeps_its_judge_cache_beside_the_output_or_where_told(tmp_path):
    path = tmp_path / "p.tsv"
    _frame().to_csv(path, sep="\t", index=False)
    with TestServer(Script(rules=[Rule("A", pattern="Either A or B")], default="Z")) as server:
        judge = ["--judge", f"openai/judge@{server.base_url}"]
        out = tmp_path / "rows" / "r.parquet"
        out.parent.mkdir()
        CliRunner().invoke(app, ["score", str(path), *judge, "--out", str(out)])
        assert (out.parent / "judge_cache.sqlite").is_file()
        chosen = tmp_path / "mine.sqlite"
        CliRunner().invoke(app, ["score", str(path), *judge, "--cache", str(chosen)])
        assert chosen.is_file() and server.stats.requests == 2


def test_score_fails_clearly(tmp_path):
    path = tmp_path / "p.tsv"
    _frame().drop(columns=["prediction"]).to_csv(path, sep="\t", index=False)
    result = CliRunner().invoke(app, ["score", str(path)])
    assert result.exit_code == 1 and "required column 'prediction' is missing" in result.output
    text = CliRunner().invoke(app, ["score", str(tmp_path / "p.txt")])
    assert text.exit_code == 1
