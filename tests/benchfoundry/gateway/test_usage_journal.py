"""Model usage is journaled as the calls are made: a step killed with SIGKILL half-way and then
resumed accounts for exactly the calls, tokens and cost of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from benchfoundry.core.records import CandidateRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.gateway.usage import Usage, UsageLedger, read_journal
from benchfoundry.storage.tables import RunFolder

REPO = Path(__file__).resolve().parents[3]

# The child runs the filter step alone (plain Python, no Prefect) against the test server, with a
# priced catalogue entry so that tokens and cost are counted.
CHILD = """
import sys
from benchfoundry.gateway.models import ModelSpec
from benchfoundry.gateway.assemble import gateway_for_run
from benchfoundry.tasks.qc.options import FilterOptions
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.stage import filter_all

root, url = sys.argv[1], sys.argv[2]
priced = ModelSpec(name="priced", provider="openai", model="oracle", base_url=url,
                   price_in_per_mtok=1000.0, price_out_per_mtok=2000.0, concurrency=1)
gateway = gateway_for_run(root, "filter", catalogue={"priced": priced})
filter_all(RunFolder(root), gateway, FilterOptions(blind=[], chance=[]), {"text_only": ["priced"]})
gateway.ledger.write(root)
"""


def _child(root: Path, url: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(root), url], cwd=REPO, env=env)


def _made(root: Path) -> tuple[int, int, int, float]:
    usage = json.loads((root / "usage.json").read_text())["filter"]["priced"]
    return (
        usage["calls"] - usage["cached"],
        usage["tokens_in"],
        usage["tokens_out"],
        round(usage["cost"], 9),
    )


def test_a_killed_steps_usage_is_kept_and_a_resume_adds_up_to_an_uninterrupted_run(
    tmp_path, image_bytes, store_raw_image, candidate_record
):
    runs = {name: RunFolder(tmp_path / name) for name in ("whole", "killed")}
    for run in runs.values():
        image = store_raw_image(run, image_bytes())
        run.table(CandidateRecord).append(
            [candidate_record(f"q{k}", image, answer="ABCD"[k % 4]) for k in range(20)]
        )
    seen = {"n": 0}
    victim: dict[str, subprocess.Popen] = {}
    lock = threading.Lock()

    def answer(request) -> str:
        with lock:
            seen["n"] += 1
            if "p" in victim and seen["n"] == 9:  # the 9th call never comes back
                os.kill(victim["p"].pid, signal.SIGKILL)
        return "A"

    with TestServer(Script(rules=[Rule(answer)])) as server:
        whole = _child(runs["whole"].root, server.base_url)
        assert whole.wait(timeout=300) == 0
        calls_whole = seen["n"]
        seen["n"] = 0
        victim["p"] = _child(runs["killed"].root, server.base_url)
        assert victim["p"].wait(timeout=300) == -signal.SIGKILL
        del victim["p"]
        journaled = read_journal(runs["killed"].root)["filter"]["priced"]
        # Counted before the kill: the 8 answered calls. A call is journaled and cached while it
        # still holds the model's slot, and this model has one: the 9th went out after the 8th
        # was kept.
        assert journaled.calls == 8 and journaled.cached == 0
        resumed = _child(runs["killed"].root, server.base_url)
        assert resumed.wait(timeout=300) == 0
    assert calls_whole > 9
    # The 9th call was cut off unanswered and is asked again; nothing else is (every answered call
    # was kept before the next went out), whatever the machine's load.
    asked_again = seen["n"] - 1 - calls_whole
    assert asked_again == 0
    made_whole, made_killed = _made(runs["whole"].root), _made(runs["killed"].root)
    assert made_killed == made_whole
    assert made_whole[1] > 0 and made_whole[3] > 0


def test_a_folder_written_before_journals_keeps_its_totals(tmp_path):
    old = {"filter": {"m": Usage(calls=3, tokens_in=30, cost=0.5).model_dump()}}
    (tmp_path / "usage.json").write_text(json.dumps(old))
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    ledger.record("filter", "m", Usage(calls=2, tokens_in=20, cost=0.25))
    ledger.write(tmp_path)
    merged = json.loads((tmp_path / "usage.json").read_text())["filter"]["m"]
    assert (merged["calls"], merged["tokens_in"], merged["cost"]) == (5, 50, 0.75)
    ledger.write(tmp_path)  # writing again adds nothing
    assert json.loads((tmp_path / "usage.json").read_text())["filter"]["m"]["calls"] == 5


def test_a_line_cut_short_by_a_kill_is_skipped(tmp_path):
    ledger = UsageLedger(tmp_path / "usage.jsonl")
    ledger.record("s", "m", Usage(calls=1, tokens_in=4))
    with open(tmp_path / "usage.jsonl", "a") as handle:
        handle.write('{"stage": "s", "model": "m", "cal')
    assert read_journal(tmp_path)["s"]["m"].calls == 1
    ledger.record("s", "m", Usage(calls=1, tokens_in=4))  # starts a line of its own
    assert read_journal(tmp_path)["s"]["m"].calls == 2
