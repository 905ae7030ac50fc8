"""The explorer's data without a browser: a model's server keeps no credentials or path in the
files, and an item's outcome per model follows CircularEval (right only if every pass is right;
a wrong pass that named no option is unparsed; a failed call with no answer is failed)."""

from __future__ import annotations

from benchfoundry.explorer.evaluation_data import served
from benchfoundry.explorer.site import Pass, outcome


def test_a_server_url_keeps_only_scheme_host_and_port():
    assert served("openai/m@https://alice:s3cret@api.example.org:8443/v1?key=abc") == (
        "openai/m",
        "https://api.example.org:8443",
    )
    assert served("openai/m@http://127.0.0.1/v1") == ("openai/m", "http://127.0.0.1")
    assert served("facts-smollm2") == ("facts-smollm2", None)


def test_outcomes_follow_circular_eval():
    def passes(*verdicts: tuple[bool, str | None]) -> list[Pass]:
        return [Pass(k, list("ABCD"), "reply", read, ok) for k, (ok, read) in enumerate(verdicts)]

    assert outcome(passes((True, "A"), (True, "B"), (True, "C"), (True, "D")), None) == "R"
    assert outcome(passes((True, "A"), (False, "C")), None) == "W"
    assert outcome(passes((True, "A"), (False, "Z")), None) == "U"
    assert outcome(passes((False, None)), None) == "U"
    assert outcome([], "timeout") == "F"
    assert outcome([], None) == "-"
    # an answer stored after an earlier failure counts: the failure is history
    assert outcome(passes((True, "A")), "timeout") == "R"
