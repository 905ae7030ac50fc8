"""`benchfoundry evaluate` as a process against a test server that misbehaves as real servers do
(issue 55), one command for all of it: a question the server never answers costs that question
its timeout and holds back no other (their CircularEval passes go on while it waits), a slow
answer likewise; the refusals of a few neighbouring questions (an image's questions together,
vLLM's image limit) do not stop a working model; and a model whose server fails every call is
cut short by its breaker after the breaker's count, the rest counted as not asked; one whose
key is revoked mid-run is stopped after five refusals in a row."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from benchfoundry.core.records import CallFailureRecord
from benchfoundry.devtools.testserver import Refusal, Rule, Script, TestServer
from benchfoundry.storage.tables import RunFolder

REPO = Path(__file__).resolve().parents[3]
N = 20
TIMEOUT_S = 2.0
HUNG, SLOW = 3, 8  # the question the server never answers, the one it answers slowly
REFUSED = {12, 13, 14, 15}  # two images' questions, neighbours: vLLM's image limit
DEAD = 40  # questions asked of the model whose server fails every call
pytestmark = pytest.mark.slow


def _tsv(path: Path, image_bytes, n: int) -> Path:
    """`n` questions, two per image; the right option of question k is `k-right`, shown first."""
    rows = []
    for i in range(n):
        image = base64.b64encode(image_bytes(seed=i // 2)).decode() if i % 2 == 0 else str(i - 1)
        rows.append(
            {
                "index": i, "image": image, "question": f"Question {i}: which one?",
                "A": f"{i}-right", "B": f"{i}-w1", "C": f"{i}-w2", "D": f"{i}-w3",
                "answer": "A", "category": "c",
            }
        )  # fmt: skip
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


class Patient:
    """Answers right, remembering when each question was asked; never answers HUNG (until the
    test ends), answers SLOW after most of a timeout."""

    def __init__(self) -> None:
        self.asked: dict[int, list[float]] = defaultdict(list)
        self.released = threading.Event()

    def __call__(self, request) -> str:
        number = int(request.text.split("Question ", 1)[1].split(":", 1)[0])
        self.asked[number].append(time.monotonic())
        if number == HUNG:
            self.released.wait(60)
        elif number == SLOW:
            time.sleep(0.75 * TIMEOUT_S)
        return next(w for w in request.text.split() if w.endswith("-right"))


def test_no_question_waits_on_another_and_a_dead_server_is_cut_short(tmp_path, image_bytes):
    patient = Patient()
    limit = Refusal(400, "At most 1 image(s) may be provided in one request.")
    pattern = r"Question (" + "|".join(map(str, sorted(REFUSED))) + r"):"
    script = Script(
        rules=[
            Rule(Refusal(500, "internal error"), model="dead", pattern="Question"),
            # answers the preflight's tiny question, then refuses every question: key revoked
            Rule(Refusal(403, "key revoked"), model="revoked", pattern="Question"),
            Rule(limit, model="patient", pattern=pattern),
            Rule(patient, model="patient", pattern="Question"),
        ]
    )
    tsv = _tsv(tmp_path / "bench.tsv", image_bytes, DEAD)
    with TestServer(script) as server:
        catalogue = tmp_path / "models.yaml"
        catalogue.write_text(
            "models:\n"
            f"  - {{name: patient, provider: openai, model: patient, base_url: '{server.base_url}',"
            f" timeout_s: {TIMEOUT_S}, concurrency: 4}}\n"
            f"  - {{name: dead, provider: openai, model: dead, base_url: '{server.base_url}',"
            " concurrency: 4, breaker_after: 10}\n"
            f"  - {{name: revoked, provider: openai, model: revoked, base_url: '{server.base_url}',"
            " concurrency: 4}\n",
            encoding="utf-8",
        )
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            "name: t\nmodel_catalogue: models.yaml\nsources: [{kind: tsv, path: bench.tsv}]\n",
            encoding="utf-8",
        )
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(tmp_path / "run"),
                 "--dataset", str(tsv), "--model", "patient", "--model", "dead",
                 "--model", "revoked",
                 "--spec", str(spec), "--json"],
                cwd=REPO, capture_output=True, text=True, timeout=240, env=dict(os.environ),
            )  # fmt: skip
        finally:
            patient.released.set()
        took = time.monotonic() - started
        dead_requests = server.stats.by_model["dead"]
        revoked_requests = server.stats.by_model["revoked"] - 1  # less the preflight's
    assert done.returncode == 3, done.stderr[-3000:]
    scores = {s["model"]: s for s in json.loads(done.stdout)["scores"]}

    # The patient model: asked everything, every question on its own clock.
    patient_score = scores["patient"]
    assert patient_score["stopped"] is None, "neighbouring refusals do not stop a working model"
    assert patient_score["failed_by_reason"] == {"HTTP 400": len(REFUSED), "timeout": 1}
    assert patient_score["circular"]["correct"] == DEAD - len(REFUSED) - 1
    hung = patient.asked[HUNG]
    assert len(hung) == 2, "a call left hanging is asked once more, not to the end"
    others = [t for q, times in patient.asked.items() if q not in (HUNG, SLOW) for t in times]
    assert len(patient.asked) == DEAD - len(REFUSED)
    assert all(len(patient.asked[q]) == 4 for q in patient.asked if q != HUNG), "every pass"
    # Every other question's every pass was asked before the hung question's last try was
    # given up on: none of them waited for it (the old waves held every pass 1 for it).
    assert max(others) < hung[-1] + TIMEOUT_S
    # The slow question's passes followed one another, each as soon as the last was answered
    # (a pass is 0.75 of a timeout): they waited neither for the hung call nor for the others.
    slow = patient.asked[SLOW]
    assert all(b - a < TIMEOUT_S for a, b in zip(slow, slow[1:], strict=False))
    assert took < 120, "a hung call costs its question two timeouts, not the run ten"

    # The dead model: cut short after the breaker's count, the rest not asked.
    dead = scores["dead"]
    assert 10 <= dead_requests <= 10 + 4, "the breaker's count and the calls then in flight"
    assert dead["failed"] == DEAD and dead["answered"] == 0
    assert "server failing" in dead["stopped"]
    reasons = dead["failed_by_reason"]
    assert set(reasons) <= {"HTTP 500", "not asked: server failing"}
    assert reasons["not asked: server failing"] >= DEAD - 10
    stored = RunFolder(tmp_path / "run").table(CallFailureRecord).records()
    assert sum(r.model == "dead" for r in stored) == DEAD
    assert "server failing" in done.stderr and "--allow-failures" in done.stderr

    # The model whose key was revoked: stopped after five refusals in a row about the model.
    revoked = scores["revoked"]
    assert 5 <= revoked_requests <= 5 + 3, "five refusals, and the calls then in flight"
    assert revoked["failed"] == DEAD and revoked["vanilla"]["accuracy"] == 0.0
    assert revoked["failed_by_reason"] == {
        "HTTP 403": revoked_requests,
        "not asked": DEAD - revoked_requests,
    }
    assert "stopped after 5 calls in a row refused with HTTP 403" in revoked["stopped"]
