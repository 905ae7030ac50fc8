"""A whole build (every model-calling stage: generate, filter, consensus, evaluate and its
judge; then review, publish, evaluate) run twice as a user runs it, against the local
OpenAI-compatible test server: once clean, once with 20% of calls faulted (429 with and without
Retry-After, 500, 503, timeouts, dropped connections, truncated JSON, empty choices). The faulted
build completes with every decision, the release and the leaderboard equal to the clean one's,
every fault retried and counted in the usage report. Both use catalogue models whose key comes
from the environment: no file the run, the release or Prefect writes holds it, nor any output."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchfoundry.core.records import ScoredRecord
from benchfoundry.devtools.compare import run_tables
from benchfoundry.devtools.synthetic import write_corpus
from benchfoundry.devtools.testserver import Oracle, Rule, Script, TestServer
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
KEY = "sk-fake-" + "7f3a9c2e1b" * 4
FAULTS = {"429": 0.04, "5xx": 0.04, "timeout": 0.03, "drop": 0.03, "malformed": 0.03, "empty": 0.03}


def script(run: Path) -> Script:
    """Deterministic answers: the writer's drafts do not parse (recorded as refused); the reader
    says A; the looker knows the answers, but on counting questions writes something the
    heuristic cannot read, for the judge, which says C."""
    oracle = Oracle(run)

    def looker(request) -> str:
        if re.search(r"how many", request.text, re.I):
            return "Hmm, hard to say which."
        return oracle.answer(request.text)

    return Script(
        rules=[
            Rule("not json at all", model="writer"),
            Rule("A", model="reader"),
            Rule(looker, model="looker"),
            Rule("C", model="grader"),
        ],
        default="A",
    )


def _files_holding(root: Path, needle: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    )


def _setup(folder: Path, server: TestServer, concurrency: int = 8, timeout_s: float = 1.0) -> Path:
    """The corpus, the catalogue (every model on `server`, keyed from the environment, each
    call given up after `timeout_s`; a timeout retried like any fault, also in the evaluation,
    which otherwise asks a timed-out call once more only) and the spec of a whole build in
    `folder`; returns the spec."""
    write_corpus(folder / "scenes", n_objects=3, n_text=1, seed=5)
    entries = [
        f"  - {{name: {name}, provider: openai, model: {name}, base_url: '{server.base_url}',"
        f" api_key_env: BENCHFOUNDRY_FAKE_KEY, roles: [{role}], timeout_s: {timeout_s:g},"
        f" max_attempts: 10, timeout_retries: 9, concurrency: {concurrency}}}"
        for name, role in (("writer", "generator"), ("reader", "text_only"),
                           ("looker", "vlm"), ("grader", "judge"))
    ]  # fmt: skip
    (folder / "models.yaml").write_text("models:\n" + "\n".join(entries) + "\n", encoding="utf-8")
    spec = folder / "spec.yaml"
    spec.write_text(
        "name: keyed\n"
        "sources: [{kind: folder, path: scenes/images}, {kind: tsv, path: scenes/questions.tsv}]\n"
        "stages: [ingest, extract, generate, filter, consensus, select, review, publish, evaluate]\n"
        "model_catalogue: models.yaml\n"
        "options:\n"
        "  extract: {ocr: none}\n"
        "  filter: {blind: [blind/longest], chance: [blind/random]}\n"
        "  review: {auto: true}\n"
        "  publish: {to: releases, allow_unreviewed: true, letter_tolerance: 0.6,\n"
        "            longest_answer_share: 1.0}\n"
        "  evaluate: {models: [looker], judge: grader, mode: circular}\n"
        "models: {generator: [writer], text_only: [reader], vlm: [looker], judge: [grader]}\n"
        "output: run\n",
        encoding="utf-8",
    )
    return spec


def _env(home: Path, api: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(
        PREFECT_HOME=str(home), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
        BENCHFOUNDRY_FAKE_KEY=KEY,
    )  # fmt: skip
    if api:
        env["PREFECT_API_URL"] = api
    return env


def _build_command(spec: Path) -> list[str]:
    return [sys.executable, "-m", "benchfoundry", "build", str(spec), "--json", "--verbose"]


@pytest.fixture(scope="module")
def builds(tmp_path_factory, prefect_server) -> dict[str, dict]:
    """The clean and the faulted build, side by side (the faulted one spends most of its time
    waiting out faults), each with its own test server, folder and Prefect home, recording their
    flow runs on the suite's Prefect server. The faulted build's calls are given up after 0.6 s,
    its slow answers take 0.8 s (alone on the 2-core machine: 45 s with 1.0 and 1.2, 26 s with
    these); a call slowed by a loaded machine is one more timeout, retried."""
    api, server_env = prefect_server
    started = {}
    with contextlib.ExitStack() as stack:
        for name, faults, timeout_s in (("clean", None, 1.0), ("faulty", FAULTS, 0.6)):
            folder, home = tmp_path_factory.mktemp(name), tmp_path_factory.mktemp(f"home-{name}")
            server = stack.enter_context(
                TestServer(script(folder / "run"), fault_rates=faults, fault_delay=0.8, seed=7)
            )
            spec = _setup(folder, server, timeout_s=timeout_s)
            with (folder / "out").open("wb") as out, (folder / "err").open("wb") as err:
                process = subprocess.Popen(
                    _build_command(spec), stdout=out, stderr=err, env=_env(home, api), cwd=REPO
                )  # the process keeps its own copies of the files
            started[name] = (folder, home, server, process)
        done = {}
        for name, (folder, home, server, process) in started.items():
            code = process.wait(timeout=900)
            stdout, stderr = ((folder / f).read_text() for f in ("out", "err"))
            assert code == 0, stderr[-4000:]
            done[name] = {
                "summary": json.loads(stdout),
                "output": stdout + stderr,
                "headers": {h.get("authorization") for h in server.stats.headers},
                "by_model": dict(server.stats.by_model),
                "faults": dict(server.stats.faults),
                "bodies": list(server.stats.bodies),
                "run": folder / "run",
                "releases": folder / "releases",
                "home": home,
                "server_home": Path(server_env["PREFECT_HOME"]),
            }
    return done


def _decisions(run: Path) -> dict:
    return {
        r.question_id: (r.decision, tuple(r.flags), r.hits_text, r.hits_vlm, r.hits_vlm_circular)
        for r in RunFolder(run).table(ScoredRecord).records()
    }


# what the gateway calls each fault the server injects
KINDS = {"429": "rate_limited", "429-bare": "rate_limited", "500": "server_error",
         "503": "server_error", "slow": "timeout", "drop": "connection",
         "malformed": "malformed_response", "empty": "empty_response"}  # fmt: skip


def _errors(run: Path) -> dict[str, int]:
    usage = json.loads((run / "usage.json").read_text(encoding="utf-8"))
    found: dict[str, int] = {}
    for models in usage.values():
        for u in models.values():
            for kind, n in u.get("errors", {}).items():
                found[kind] = found.get(kind, 0) + n
    return found


def test_a_faulted_build_decides_releases_and_scores_as_the_clean_one(builds):
    clean, faulty = builds["clean"], builds["faulty"]
    injected = sum(faulty["faults"].values())
    requests = sum(faulty["by_model"].values())
    assert injected >= 0.1 * requests, (injected, requests)
    assert {"429", "429-bare", "500", "503", "slow", "drop", "malformed", "empty"} <= set(
        faulty["faults"]
    )
    # every stage that calls a model met faults, the judge included
    assert {"writer", "reader", "looker", "grader"} <= set(faulty["by_model"])
    assert _decisions(faulty["run"]) == _decisions(clean["run"])
    a, b = clean["summary"]["summaries"], faulty["summary"]["summaries"]
    print(f"faults {faulty['faults']} in {requests} requests")  # shown with -s
    assert b["publish"]["version"] == a["publish"]["version"], "the same release"
    board = [
        (s["model"], s["vanilla"]["correct"], s["circular"]["correct"])
        for s in b["evaluate"]["scores"]
    ]
    assert board == [
        (s["model"], s["vanilla"]["correct"], s["circular"]["correct"])
        for s in a["evaluate"]["scores"]
    ]
    assert all(s["unanswered"] == 0 for s in b["evaluate"]["scores"])
    # every fault was one failed attempt, retried, and the usage report counts it by kind (a
    # loaded machine may add a real timeout or two, never anything else)
    expected: dict[str, int] = {}
    for kind, n in faulty["faults"].items():
        expected[KINDS[kind]] = expected.get(KINDS[kind], 0) + n
    counted = _errors(faulty["run"])
    assert {k: v for k, v in counted.items() if k != "timeout"} == {
        k: v for k, v in expected.items() if k != "timeout"
    }
    assert counted.get("timeout", 0) >= expected.get("timeout", 0)
    assert set(_errors(clean["run"])) <= {"timeout"}


def test_no_key_from_the_environment_is_written_anywhere(builds):
    for build in (builds["clean"], builds["faulty"]):
        assert build["headers"] == {f"Bearer {KEY}"}, "every call carried the key"
        for root in (build["run"], build["releases"], build["home"], build["server_home"]):
            assert _files_holding(root, KEY.encode()) == [], root
        assert KEY not in build["output"]


# Where the killed build dies, in order: a crash point (armed with BENCHFOUNDRY_CRASH_AT; the
# process SIGKILLs itself there) or, while a stage has calls in flight, a SIGKILL of its process
# group from outside once a model has received a share of the requests it gets in a whole build.
KILLS = [
    ("extraction", "table.after_write:visual_facts"),
    ("generation", "table.after_write:candidates"),
    ("filtering", ("reader", 0.5)),
    ("consensus", ("looker", 0.3)),
    ("review", "table.after_write:reviews"),
    ("publishing", "publish.after_data"),
    ("evaluation", "evaluate.after_batch"),
]
SLOTS = 2  # each model's concurrency in the killed build: the calls a kill can leave in flight


def _canonical(body: dict) -> str:
    return json.dumps(body, sort_keys=True)


def _repeats(bodies: list[dict]) -> int:
    return len(bodies) - len({_canonical(b) for b in bodies})


def test_a_build_killed_in_every_stage_ends_as_the_uninterrupted_one(
    builds, tmp_path, prefect_server
):
    clean = builds["clean"]
    api, _ = prefect_server
    folder = tmp_path / "killed"
    folder.mkdir()
    with TestServer(script(folder / "run"), seed=7) as server:
        spec = _setup(folder, server, concurrency=SLOTS)
        for n, (stage, point) in enumerate(KILLS):
            env = _env(tmp_path / "home", api)
            if isinstance(point, str):
                env["BENCHFOUNDRY_CRASH_AT"] = point
            out = folder / f"attempt-{n}.log"
            with out.open("wb") as log:
                proc = subprocess.Popen(
                    _build_command(spec), stdout=log, stderr=subprocess.STDOUT, env=env,
                    cwd=REPO, start_new_session=True,
                )  # fmt: skip
                if not isinstance(point, str):  # from outside, part of the way into its calls
                    model, share = point
                    until = server.stats.by_model[model] + int(share * clean["by_model"][model])
                    while server.stats.by_model[model] < until:
                        assert proc.poll() is None, out.read_text()[-3000:]
                        time.sleep(0.01)
                    os.killpg(proc.pid, signal.SIGKILL)
                code = proc.wait(timeout=600)
            assert code == -signal.SIGKILL, f"not killed in {stage}: {out.read_text()[-3000:]}"
        final = subprocess.run(
            _build_command(spec), capture_output=True, text=True, env=_env(tmp_path / "home", api),
            cwd=REPO, timeout=900,
        )  # fmt: skip
        assert final.returncode == 0, final.stderr[-4000:]
        bodies = list(server.stats.bodies)
    summary = json.loads(final.stdout)["summaries"]
    expected = clean["summary"]["summaries"]
    assert summary["publish"]["version"] == expected["publish"]["version"], "the same release"
    assert [
        (s["model"], s["vanilla"]["correct"], s["circular"]["correct"], s["unanswered"])
        for s in summary["evaluate"]["scores"]
    ] == [
        (s["model"], s["vanilla"]["correct"], s["circular"]["correct"], s["unanswered"])
        for s in expected["evaluate"]["scores"]
    ], "the same leaderboard"
    # no record lost or added: every table equal, row by row, to the uninterrupted build's
    # (the killed build's catalogue gives its models fewer slots: its spec hash differs)
    killed_tables = run_tables(folder / "run", [folder])
    clean_tables = run_tables(clean["run"], [clean["run"].parent])
    assert killed_tables.keys() == clean_tables.keys()
    for name, rows in clean_tables.items():
        assert killed_tables[name] == rows, (name, set(killed_tables[name]) ^ set(rows))
    # the calls made again are at most those in flight at each kill
    repeated = _repeats(bodies) - _repeats(clean["bodies"])
    print(f"{len(KILLS)} kills: {len(bodies)} requests, {repeated} repeated")  # shown with -s
    assert len(bodies) - repeated == len(clean["bodies"])
    assert repeated <= len(KILLS) * SLOTS * 2, repeated
