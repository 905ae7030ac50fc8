import json
import os
import signal
import subprocess
import sys

from openai import OpenAI
from typer.testing import CliRunner

from benchfoundry.cli import app
from benchfoundry.devtools.testserver import Script, TestServer


def test_models_lists_the_catalogue_and_checks_models():
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "--json"])
    assert listed.exit_code == 0, listed.output
    names = [row["name"] for row in json.loads(listed.stdout)["models"]]
    assert {"smollm2", "blind-random", "gpt-4o-mini"} <= set(names)
    with TestServer(Script(default="OK")) as server:
        checked = runner.invoke(
            app, ["models", "--check", "--json", "blind/longest", f"openai/m@{server.base_url}"]
        )
        assert checked.exit_code == 0, checked.output
        rows = json.loads(checked.stdout)["models"]
        assert [r["check"]["ok"] for r in rows] == [True, True]
        assert (
            rows[0]["sees"] == "nothing"
            and rows[1]["sees"] == "pixels"
            and rows[1]["check"]["reply"] == "OK"
        )
        server.inject("500", times=10)
        failed = runner.invoke(app, ["models", "--check", f"openai/m@{server.base_url}"])
        assert (
            failed.exit_code == 1 and "FAILED" in failed.stdout and "server_error" in failed.stdout
        )


def test_models_of_a_build_spec_by_role(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: x\nsources: [{kind: packaged}]\nmodels: {text_only: [blind-random, smollm2], vlm: [facts-smollm2]}\n"
    )
    result = CliRunner().invoke(app, ["models", "--spec", str(spec), "--json"])
    rows = {r["name"]: r["roles"] for r in json.loads(result.stdout)["models"]}
    assert rows == {
        "blind-random": ["text_only"],
        "smollm2": ["text_only"],
        "facts-smollm2": ["vlm"],
    }


def test_serve_test_runs_a_server_users_can_call(tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text("default: C\nrules:\n  - {pattern: colour, reply: B}\n")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchfoundry",
            "serve-test",
            "--port",
            "0",
            "--script",
            str(script),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        line = process.stdout.readline()
        base_url = line.split(" at ")[1].split()[0]
        client = OpenAI(base_url=base_url, api_key="unused")

        def ask(text):
            return (
                client.chat.completions.create(
                    model="any", messages=[{"role": "user", "content": text}]
                )
                .choices[0]
                .message.content
            )

        assert (ask("What colour?"), ask("How many?")) == ("B", "C")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    assert process.returncode == 0


def test_serve_test_injects_faults_at_the_rates_asked(tmp_path):
    """A user dry-runs against failures: 429s, 5xx, timeouts, drops, malformed JSON and empty
    choices come at random at the rates given, and a gateway with retries still gets answers."""
    import openai

    from benchfoundry.core.clock import ManualClock
    from benchfoundry.gateway import Gateway
    from benchfoundry.gateway.models import ModelSpec

    faults = "429:0.15,5xx:0.15,timeout:0.05,drop:0.05,malformed:0.05,empty:0.05"
    process = subprocess.Popen(
        [sys.executable, "-m", "benchfoundry", "serve-test", "--port", "0", "--faults", faults]
        + ["--fault-delay", "0.7", "--seed", "3"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert "faults: 429 15%, 5xx 15%" in line
        base_url = line.split(" at ")[1].split()[0]
        # a slow answer takes 0.7 s, a call is given up after 0.5 s (six of them cost 1 s each
        # when given 1.5 and 1.0: a tenth of the test's time, waiting)
        client = OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=0.5)
        seen: dict[str, int] = {}
        for _ in range(120):
            try:
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                ).choices[0].message.content.strip()
                kind = "ok"
            except openai.RateLimitError:
                kind = "429"
            except openai.InternalServerError:
                kind = "5xx"
            except openai.APITimeoutError:
                kind = "timeout"
            except openai.APIConnectionError:
                kind = "drop"
            except (openai.APIResponseValidationError, ValueError):
                kind = "malformed"
            except (AttributeError, IndexError, TypeError):
                kind = "empty"
            seen[kind] = seen.get(kind, 0) + 1
        assert set(seen) == {"ok", "429", "5xx", "timeout", "drop", "malformed", "empty"}, seen
        assert 30 <= seen["ok"] <= 90 and seen["429"] + seen["5xx"] >= 15, seen
        spec = ModelSpec(
            name="flaky", provider="openai", model="m", base_url=base_url, timeout_s=0.5
        )
        gateway = Gateway(clock=ManualClock())  # backoff waits cost no real time
        answers = [gateway.generate(spec, f"question {k}").text for k in range(10)]
        assert answers == ["A"] * 10
        assert sum(gateway.ledger.totals().errors.values()) > 0
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)


def test_serve_test_refuses_unknown_faults():
    result = CliRunner().invoke(app, ["serve-test", "--faults", "429:0.1,teapot:0.2"])
    assert result.exit_code == 1 and "teapot:0.2" in result.output
    result = CliRunner().invoke(app, ["serve-test", "--faults", "429:0.8,500:0.5"])
    assert result.exit_code == 1 and "more than 1" in result.output


def test_cache_export_and_import_commands(tmp_path):
    from benchfoundry.gateway import Gateway, ResponseCache
    from benchfoundry.gateway.assemble import cache_path

    with TestServer() as server:
        Gateway(cache=ResponseCache(cache_path(tmp_path / "a"))).generate(
            f"openai/m@{server.base_url}", "hello"
        )
    runner = CliRunner()
    exported = runner.invoke(
        app, ["cache", "export", str(tmp_path / "shared.sqlite"), "--out", str(tmp_path / "a")]
    )
    assert exported.exit_code == 0 and "exported 1 responses" in exported.stdout
    imported = runner.invoke(
        app, ["cache", "import", str(tmp_path / "shared.sqlite"), "--out", str(tmp_path / "b")]
    )
    assert imported.exit_code == 0 and "imported 1 new responses" in imported.stdout
    again = runner.invoke(
        app, ["cache", "import", str(tmp_path / "shared.sqlite"), "--out", str(tmp_path / "b")]
    )
    assert "imported 0 new responses" in again.stdout
    missing = runner.invoke(
        app, ["cache", "export", str(tmp_path / "x.sqlite"), "--out", str(tmp_path / "nope")]
    )
    assert missing.exit_code == 1
