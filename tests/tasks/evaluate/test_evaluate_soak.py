"""A small soak of the evaluate job against the loopback test server (the full one, 10,000
questions, is `bench/evaluate_load.py soak`): the first call of 2% of the questions hangs past
the timeout, of 5% gets HTTP 500, of 1% HTTP 429; every fault is met and ridden out, no
question is lost or asked a third time, and the numbers are exact."""

from __future__ import annotations

import base64
from collections import Counter

import pandas as pd
import pytest

from benchfoundry.core.records import CallFailureRecord, ResultRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.devtools.testserver_script import FirstCallFaults
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from benchfoundry.tasks.evaluate.stage import evaluate_model

N = 400
TIMEOUT_S = 2.0  # generous: a loaded machine must not time out a call answered at once
pytestmark = pytest.mark.slow


def test_a_small_soak_every_fault_met_nothing_lost_numbers_exact(tmp_path, image_bytes):
    rows = [
        {
            "index": k, "image": base64.b64encode(image_bytes(seed=k)).decode() if k < 20
            else str(k % 20), "question": f"Question {k}: which one?", "A": f"{k}-right",
            "B": f"{k}-w1", "C": f"{k}-w2", "D": f"{k}-w3", "answer": "A", "category": "c",
        }
        for k in range(N)
    ]  # fmt: skip
    tsv = tmp_path / "bench.tsv"
    pd.DataFrame(rows).to_csv(tsv, sep="\t", index=False)
    stand_in = FirstCallFaults(hang_s=TIMEOUT_S + 1.0)
    planned = Counter(f for k in range(N) if (f := stand_in.fault_of(k)))
    assert planned["hang"] and planned["500"] and planned["429"], "each kind of fault is tried"
    with TestServer(Script(rules=[Rule(stand_in, pattern="Question")])) as server:
        models = tmp_path / "models.yaml"
        models.write_text(
            f"models:\n  - {{name: m, provider: openai, model: m, base_url: '{server.base_url}',"
            f" timeout_s: {TIMEOUT_S}, concurrency: 16}}\n",
            encoding="utf-8",
        )
        options = EvaluateOptions(models=["m"], mode="vanilla")
        job = evaluate_model(str(tmp_path / "run"), str(tsv), options, "m", True, str(models))
        requests = server.stats.requests
    faulted = sum(planned.values())
    assert dict(stand_in.met) == dict(planned), "every fault was met"
    assert sorted(k for k, c in stand_in.calls.items() if c == 2) == sorted(
        k for k in range(N) if stand_in.fault_of(k)
    ), "each faulted question asked exactly twice"
    assert set(stand_in.calls) == set(range(N)) and max(stand_in.calls.values()) == 2
    assert requests == N + faulted
    stored = Counter(
        r.question_id for r in RunFolder(tmp_path / "run").table(ResultRecord).records()
    )
    assert len(stored) == N and set(stored.values()) == {1}, "none lost, none stored twice"
    assert not RunFolder(tmp_path / "run").table(CallFailureRecord).records()
    assert job.unanswered == 0 and job.calls_made == N
    rows_right = [r.correct for r in RunFolder(tmp_path / "run").table(ResultRecord).records()]
    assert sum(rows_right) == 360, "every question k with k % 10 != 9, exactly"
