"""The dataset card names the models that did the hit counting, as the judgements of the
released questions record them, published as a user does (`benchfoundry publish` in its own
process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchfoundry.core.records import JudgementRecord
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture


def test_the_card_names_the_models_that_did_the_hit_counting(run, tmp_path):  # noqa: F811
    """An offline build names no model in its spec: the defaults answer, and the card names
    them as the judgements record them (blind baselines apart), not 'none'."""
    options = {"rules": ["mmstar"], "blind": ["blind/longest"], "circular": True}
    run.update_manifest("filter", {"models": {}, "options": options})
    run.update_manifest(
        "consensus", {"models": {}, "options": {"circular": True, "bins": {"hard": 0.34}}}
    )
    judged = [("smollm2", "text_only"), ("blind/longest", "text_only")]
    judged += [("facts-smollm2-objects", "consensus"), ("facts-smollm2-text", "consensus")]
    rows = [
        JudgementRecord(
            question_id=qid,
            model=model,
            mode=mode,
            with_image=mode == "consensus",
            pass_index=0,
            option_order=list("ABCD"),
            prompt="p",
            raw_response="A",
            extracted="A",
            extracted_by="heuristic",
            correct=True,
            error=None,
        )  # fmt: skip
        for qid in ("q00", "q01", "q07")
        for model, mode in judged
    ]
    rows.append(rows[0].model_copy(update={"question_id": "q07", "model": "only-on-q07"}))
    run.table(JudgementRecord).append(rows)
    spec = tmp_path / "bench.yaml"
    spec.write_text(
        "name: bench\nsources: [{kind: packaged}]\n"
        "options: {publish: {to: releases, letter_tolerance: 0.5}}\n",
        encoding="utf-8",
    )
    done = subprocess.run(  # as a user runs it, in its own process
        [sys.executable, "-m", "benchfoundry", "publish", "--out", str(run.root), "--spec",
         str(spec), "--allow-unreviewed", "--json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    card = (Path(json.loads(done.stdout)["release"]) / "README.md").read_text()
    assert "text-only models smollm2; blind baselines blind/longest;" in card
    assert "vision-language models facts-smollm2-objects, facts-smollm2-text;" in card
    assert "only-on-q07" not in card  # q07 was rejected: not released, not counted
