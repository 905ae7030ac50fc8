"""Judge scores debiased with people's grades (prediction-powered inference): the estimator
against hand-computed cases; the human-grades file's reader and its refusals; end to end on the
local test server, a judge that grades too high corrected down by human grades of a subset,
its interval covering the constructed human mean; a model without human grades left
uncorrected, one with a single grade given no interval; the command's --json."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.tasks.evaluate.debias import HumanGradesError, ppi_mean, read_human_grades
from benchfoundry.tasks.evaluate.options import EvaluateOptions
from tests.tasks.evaluate.test_evaluate import write_tsv

REPO = Path(__file__).resolve().parents[3]
Z = statistics.NormalDist().inv_cdf(0.975)

# The constructed case: the judge gives 1.0 to even questions, 0.8 to odd ones; what people
# would give every answer (mean 0.5) is known here, and they graded only a subset of it.
JUDGE = {n: 1.0 if n % 2 == 0 else 0.8 for n in range(8)}
HUMAN = {0: 0.6, 1: 0.4, 2: 0.5, 3: 0.3, 4: 0.7, 5: 0.4, 6: 0.6, 7: 0.5}
GRADED = (0, 1, 2, 3, 5)


def test_the_estimator_on_hand_computed_cases():
    # judge mean over all 6 answers 0.8; (human - judge) on the 3 graded: -0.5, 0, -0.4
    estimate, low, high = ppi_mean([0.5, 0.8, 0.2], [1.0, 0.8, 0.6], [1, 0.8, 0.6, 1, 0.4, 1])
    assert estimate == pytest.approx(0.8 - 0.3)
    # var(judge) / N = 0.32 / 6 / 6; var(human - judge) / n = 0.14 / 3 / 3 (population forms)
    half = Z * (0.32 / 36 + 0.14 / 9) ** 0.5
    assert half == pytest.approx(0.306435, abs=1e-6)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half))
    # a judge that gives 1.0 to everything: the interval is the human differences' alone
    estimate, low, high = ppi_mean([0.5, 0.2, 1.0], [1.0] * 3, [1.0] * 10)
    assert estimate == pytest.approx(1 - 1.3 / 3)
    half = Z * statistics.pstdev([-0.5, -0.8, 0.0]) / 3**0.5
    assert (low, high) == pytest.approx((estimate - half, estimate + half))
    # one human grade: a point estimate, no interval
    assert ppi_mean([0.25], [1.0], [1.0, 0.5]) == (pytest.approx(0.75 - 0.75), None, None)


def test_the_human_grades_file(tmp_path):
    good = tmp_path / "grades.csv"
    good.write_text(
        "question,model,grade,grader,note\nv1_0,vlm,0.5,alice,\nv1_0,vlm,1,bob,sure\n",
        encoding="utf-8",
    )
    first, second = read_human_grades(good)
    assert (first.line, first.question, first.model, first.grade, first.grader) == (
        2, "v1_0", "vlm", 0.5, "alice"
    )  # fmt: skip
    assert second.grade == 1.0
    lines = tmp_path / "grades.jsonl"
    lines.write_text(
        '{"question": "v1_1", "model": "vlm", "grade": 0, "grader": "carol"}\n\n',
        encoding="utf-8",
    )
    assert [g.grade for g in read_human_grades(lines)] == [0.0]

    bad = tmp_path / "bad.jsonl"
    rows = [
        {"question": "v1_0", "model": "vlm", "grade": 0.5, "grader": "alice"},
        {"question": "v1_1", "model": "vlm", "grade": 1.5, "grader": "alice"},
        {"question": "v1_2", "model": "vlm", "grade": "high", "grader": "alice"},
        {"question": "v1_3", "model": "vlm", "grade": 0.5, "grader": ""},
        {"question": "v1_4", "model": "vlm", "grade": 0.5, "grader": "alice", "score": 1},
        {"question": "v1_0", "model": "vlm", "grade": 0.7, "grader": "alice"},
    ]
    bad.write_text("\n".join(map(json.dumps, rows)) + "\n[1, 2]\n{oops\n", encoding="utf-8")
    with pytest.raises(HumanGradesError) as caught:
        read_human_grades(bad)
    message = str(caught.value)
    assert "7 bad rows" in message and "and 2 more" in message
    assert "line 2: grade 1.5 is outside [0, 1]" in message
    assert "line 3: grade 'high' is not a number" in message
    assert "line 4: no grader" in message
    assert "line 5: unknown field score" in message
    assert "line 6: alice graded v1_0 of vlm already (line 1)" in message

    headless = tmp_path / "headless.csv"
    headless.write_text("question,model,score\nv1_0,vlm,1\n", encoding="utf-8")
    with pytest.raises(HumanGradesError, match="the header lacks grade, grader"):
        read_human_grades(headless)
    with pytest.raises(HumanGradesError, match=r"give a \.csv or \.jsonl file"):
        read_human_grades(tmp_path / "grades.xlsx")
    with pytest.raises(HumanGradesError, match="no such file"):
        read_human_grades(tmp_path / "missing.csv")
    long = tmp_path / "long.csv"
    long.write_text("question,model,grade,grader\nv1_0,vlm,0.5,alice,extra\n", encoding="utf-8")
    with pytest.raises(HumanGradesError, match="line 2: more values than the header has"):
        read_human_grades(long)


def write_mmvet(folder: Path, image_bytes, n: int = 8) -> Path:
    """An MM-Vet folder of n questions, one image each."""
    (folder / "images").mkdir(parents=True)
    data = {}
    for i in range(n):
        (folder / "images" / f"v1_{i}.png").write_bytes(image_bytes(seed=i))
        data[f"v1_{i}"] = {
            "imagename": f"v1_{i}.png",
            "capability": ["rec"] if i % 2 else ["ocr"],
            "question": f"Q{i}: what is shown?",
            "answer": f"thing {i}",
        }
    (folder / "mm-vet.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def generous_judge() -> Script:
    """Every model answers 'my answer to Qn'; the grader gives JUDGE[n] every time."""

    def answer(request) -> str:
        return "my answer to " + re.search(r"(Q\d)", request.text).group(1)

    def grade(request) -> str:
        n = int(re.findall(r"my answer to Q(\d)", request.text)[-1])
        return str(JUDGE[n])

    return Script(
        rules=[Rule(grade, model="grader"), Rule(answer)],
        default="?",
    )


def write_grades(path: Path, vlm: str) -> Path:
    """People's grades of `vlm` on GRADED (two people on v1_0, the mean is HUMAN[0]); one of
    `openai/solo` (no endpoint) on v1_3; one of a question and one of a model the evaluation does not have."""
    rows = [("v1_0", "vlm", 0.5, "alice"), ("v1_0", "vlm", 0.7, "bob")]
    rows += [(f"v1_{n}", "vlm", HUMAN[n], "alice") for n in GRADED if n]
    rows += [
        ("v1_3", "openai/solo", 0.3, "bob"),
        ("v9_9", "vlm", 0.1, "bob"),
        ("v1_1", "gone", 1, "bob"),
    ]
    text = "question,model,grade,grader\n" + "".join(
        f"{q},{vlm if m == 'vlm' else m},{g},{who}\n" for q, m, g, who in rows
    )
    path.write_text(text, encoding="utf-8")
    return path


def test_a_generous_judge_is_corrected_by_human_grades(tmp_path, image_bytes):
    folder = write_mmvet(tmp_path / "mm-vet", image_bytes)
    with TestServer(generous_judge()) as server:
        url = server.base_url
        vlm, other, solo = (f"openai/{m}@{url}" for m in ("vlm", "other", "solo"))
        # the file names `vlm` with its endpoint, `solo` without
        grades = write_grades(tmp_path / "grades.csv", vlm)
        options = EvaluateOptions(
            dataset=folder,
            models=[vlm, other, solo],
            judge=f"openai/grader@{url}",
            gradings=2,
            human_grades=grades,
        )
        summary = STAGES["evaluate"].run(StageRun.make(tmp_path / "run", evaluate=options))
    judged = {s.model: s.total.mean for s in summary.open_scores}
    assert judged[vlm] == pytest.approx(0.9)
    found = {d.model: d for d in summary.debiased}
    d = found[vlm]
    assert (d.answers, d.human_graded, d.graders) == (8, 5, ["alice", "bob"])
    diffs = [HUMAN[n] - JUDGE[n] for n in GRADED]
    assert d.judge == pytest.approx(0.9)
    assert d.estimate == pytest.approx(0.9 + statistics.fmean(diffs)) == pytest.approx(0.46)
    half = Z * (statistics.pvariance(JUDGE.values()) / 8 + statistics.pvariance(diffs) / 5) ** 0.5
    assert (d.low, d.high) == pytest.approx((0.46 - half, 0.46 + half))
    assert d.estimate < judged[vlm]
    assert d.low <= statistics.fmean(HUMAN.values()) <= d.high  # people's mean on every answer
    assert d.high < 0.9  # the judge's own score is outside: its bias is measured
    assert d.human_mean == pytest.approx(statistics.fmean(HUMAN[n] for n in GRADED))
    # no human grades: no number, said so; one human grade: an estimate, no interval
    assert found[other].estimate is None and found[other].human_graded == 0
    assert found[solo].estimate == pytest.approx(0.9 + 0.3 - 0.8)
    assert found[solo].low is None and found[solo].high is None
    notes = "\n".join(summary.debias_notes)
    assert f"{other}: no human grades" in notes and "not corrected" in notes
    assert f"{solo}: 1 answer graded by people; an interval needs at least 2" in notes
    assert "questions not in this evaluation, not used: v9_9" in notes
    assert "models not evaluated here: gone" in notes
    # beside the judge score in the text and the Markdown
    text = "\n".join(summary.lines())
    assert f"debiased by people's grades, {vlm}: 46.0% [" in text and "judge 90.0%" in text
    assert f"debiased by people's grades, {other}: not corrected, judge 90.0%" in text
    assert f"{solo}: 40.0% (no interval)" in text
    markdown = summary.markdown()
    assert "prediction-powered inference" in markdown and str(grades) in markdown
    assert f"| {vlm} | 90.0% | 5 of 8 | 44.0% | 88.0% | 46.0% [" in markdown
    assert summary.model_dump(mode="json")["debiased"][0]["estimate"] == pytest.approx(0.46)
    report = tmp_path / "run" / "reports" / "evaluation"  # and in the run's report
    assert f"| {vlm} | 90.0% | 5 of 8 |" in (report / "leaderboard.md").read_text(encoding="utf-8")
    assert "corrected with people's grades" in (report / "report.html").read_text(encoding="utf-8")


def test_bad_human_grades_stop_before_any_model_is_asked(tmp_path, image_bytes):
    folder = write_mmvet(tmp_path / "mm-vet", image_bytes, n=2)
    bad = tmp_path / "grades.csv"
    bad.write_text("question,model,grade,grader\nv1_0,vlm,0.5,alice\nv1_1,vlm,,bob\n", "utf-8")
    with TestServer(generous_judge()) as server:
        options = EvaluateOptions(
            dataset=folder,
            models=[f"openai/vlm@{server.base_url}"],
            judge=f"openai/grader@{server.base_url}",
            human_grades=bad,
        )
        with pytest.raises(HumanGradesError, match="line 3: no grade"):
            STAGES["evaluate"].run(StageRun.make(tmp_path / "run", evaluate=options))
        assert server.stats.requests == 0
    tsv = write_tsv(tmp_path / "mcq.tsv", image_bytes)
    options = EvaluateOptions(dataset=tsv, models=["blind-random"], human_grades=bad)
    with pytest.raises(HumanGradesError, match="is multiple-choice"):
        STAGES["evaluate"].run(StageRun.make(tmp_path / "mcq", evaluate=options))


def test_the_command_reports_debiased_scores(tmp_path, image_bytes):
    folder = write_mmvet(tmp_path / "mm-vet", image_bytes)
    with TestServer(generous_judge()) as server:
        vlm = f"openai/vlm@{server.base_url}"
        grades = write_grades(tmp_path / "grades.csv", vlm)
        done = subprocess.run(
            [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(tmp_path / "run"),
             "--dataset", str(folder), "--model", vlm, "--judge",
             f"openai/grader@{server.base_url}", "--gradings", "1", "--human-grades",
             str(grades), "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    (d,) = summary["debiased"]
    assert d["model"] == vlm and d["human_graded"] == 5
    assert d["estimate"] == pytest.approx(0.46) and d["low"] < 0.5 < d["high"]
    assert summary["open_scores"][0]["total"]["mean"] == pytest.approx(0.9)
    assert summary["human_grades"] == str(grades)
