"""A bilingual release evaluated by lmms-eval itself (0.7.3, installed once per machine), offline,
from the release's own `lmms_eval/` tasks and Parquet files, against the test server, after the
release folder was moved: its scores, per language, vanilla and under CircularEval, are the ones
benchfoundry's evaluate gives the same server's replies. The scripted model is right on some
questions and wrong on others, answers some by the option's place (right in the published order
only, so CircularEval and vanilla differ), and writes its letter in several ways. Beside it, in
seconds and without lmms-eval: the tasks' prompts are evaluate's, word for word, in each
language and rotation; their reading of a reply never disagrees with evaluate's; a clip
question shows its keyframes from the release's `frames/`."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchfoundry.answering.choice import extract_choice
from benchfoundry.answering.engine import mcq_templates, rotation
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import CandidateRecord, ReviewRecord, TranslationRecord
from benchfoundry.decisions.reviews import AUTO, candidate_hash, now
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.twins import twin_candidate, twin_review_id
from benchfoundry.devtools.cached_venv import RegistryUnreachable, cached_venv
from benchfoundry.devtools.testserver import ChatRequest, Script, TestServer
from benchfoundry.tasks.publish.lmms_eval_tasks import write_lmms_eval_tasks
from tests.tasks.publish.test_publish import _options, publish
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture

# The first run on a machine builds the venv (about a minute over the SAM test's venv, whose
# torch and torchvision it uses); later runs take about 20 s.
LIVE = [pytest.mark.slow, pytest.mark.timeout(1800)]
# lmms-eval 0.7.3 patches `filelock._api`, which filelock 4 no longer has (it then logs the
# error and exits 0 having evaluated nothing); the card says so too.
PINS = ["lmms-eval==0.7.3", "filelock<4"]
REPO = Path(__file__).resolve().parents[3]
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
SHOWN = re.compile(r"^([A-J])\. \D*(\d+)-(\d+)\s*$", re.M)


@pytest.fixture(scope="session")
def lmms_eval_python(torchvision_python) -> Path:
    """lmms-eval in a venv of its own over the torchvision venv (its torch pair beneath, not
    copied; that venv and its tests are left as they were)."""
    try:
        venv = cached_venv(
            "venv-lmms-eval", PINS, beneath=torchvision_python.parent.parent, timeout_s=1200
        )
    except RegistryUnreachable as exc:
        pytest.skip(f"lmms-eval cannot be installed: the registry cannot be reached ({exc})")
    return venv / "bin" / "python"


def _policy(request: ChatRequest) -> str:
    """Question i (from its options' text, `.. i-j`): i % 3 == 0 picks option i % 4 (in Chinese
    (i + 2) % 4), i % 3 == 1 answers A wherever the options stand, i % 3 == 2 picks option
    (i + 1) % 4 (in Chinese i % 4, its key); q10 cannot tell in English."""
    shown = {(int(i), int(j)): letter for letter, i, j in SHOWN.findall(request.text)}
    (i,) = {i for i, _ in shown}
    chinese = "问题" in request.text
    if i == 10 and not chinese:
        return "I cannot tell."
    if i % 3 == 1:
        letter = "A"
    else:
        j = {0: (i + 2 * chinese) % 4, 2: (i + 1 - chinese) % 4}[i % 3]
        letter = shown[(i, j)]
    if i % 2 == 0:
        return letter
    return f"答案是{letter}" if chinese else f"The answer is {letter}."


def _twins(folder) -> None:
    """A Chinese twin of every candidate, accepted by the automatic reviewer."""
    english = {c.question_id: c for c in folder.table(CandidateRecord).records()}
    twins = [
        TranslationRecord(
            question_id=q, language="zh", question=f"问题 {q}：哪一个？", hint=None,
            options=[o.replace("option", "选项") for o in c.options], answer=c.answer,
            method="template", checks=["option_count"],
        )
        for q, c in english.items()
    ]  # fmt: skip
    folder.table(TranslationRecord).append(twins)
    ReviewStore.open(folder).add(
        [
            ReviewRecord(
                question_id=twin_review_id(t.question_id, "zh"), reviewer=AUTO,
                decision="accept", tool="auto", language="zh", decided_at=now(),
                candidate_hash=candidate_hash(twin_candidate(english[t.question_id], t)),
            )
            for t in twins
        ]
    )  # fmt: skip


def _lmms_eval(python: Path, release: Path, url: str, tasks: list[str], home: Path) -> Any:
    """lmms-eval under way, run from the release folder as its card says (model `lmms`)."""
    env = {
        "PATH": "/usr/bin:/bin", "HOME": str(home), "HF_HOME": str(home / "hf"),
        "OMP_NUM_THREADS": "1", "NO_PROXY": "127.0.0.1", **OFFLINE,
    }  # fmt: skip
    args = [
        str(python), "-m", "lmms_eval", "--model", "openai_compatible",
        "--model_args", f"model_version=lmms,base_url={url},api_key=EMPTY",
        "--include_path", "lmms_eval", "--tasks", ",".join(tasks),
        "--output_path", str(home / "out"),
    ]  # fmt: skip
    with open(home / "said.log", "w") as log:  # a file: a full pipe would stall it
        return subprocess.Popen(args, cwd=release, env=env, stdout=log, stderr=log)


def _results(running: Any, home: Path) -> dict[str, Any]:
    """lmms-eval's results by task (it exits 0 even when the evaluation failed: the file says)."""
    running.wait(timeout=900)
    said = (home / "said.log").read_text(encoding="utf-8", errors="replace")[-4000:]
    assert running.returncode == 0, said
    found = list((home / "out").rglob("*results.json"))
    assert len(found) == 1, said
    return json.loads(found[0].read_text(encoding="utf-8"))["results"]


@LIVE[0]
@LIVE[1]
def test_lmms_eval_scores_the_release_as_benchfoundry_does(run, tmp_path, lmms_eval_python):  # noqa: F811
    _twins(run)
    summary = publish(run, _options(tmp_path, letter_tolerance=0.5, allow_unreviewed=True))
    published = tmp_path / "releases" / "bench" / summary.version
    release = shutil.copytree(published, tmp_path / "moved" / "bench")  # wherever it is moved
    shutil.rmtree(published)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["languages"] == {"en": 10, "zh": 8}
    assert {"lmms_eval/utils.py", "lmms_eval/bench_zh_circular.yaml"} <= set(manifest["files"])
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "--include_path lmms_eval --tasks bench_en,bench_en_circular,bench_zh," in card

    tasks = ["bench_en", "bench_en_circular", "bench_zh", "bench_zh_circular"]
    home = tmp_path / "lmms"
    home.mkdir()
    with TestServer(Script(default=_policy)) as server:  # both at once: half the time
        running = _lmms_eval(lmms_eval_python, release, server.base_url, tasks, home)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "benchfoundry", "evaluate", "--out", str(tmp_path / "eval"),
                 "--dataset", str(release), "--model", f"openai/scripted@{server.base_url}",
                 "--mode", "circular", "--json"],
                cwd=REPO, capture_output=True, text=True, timeout=600,
                env={**os.environ, **OFFLINE},
            )  # fmt: skip
            lmms = _results(running, home)
        finally:
            if running.poll() is None:
                running.kill()
    assert done.returncode == 0, done.stderr[-3000:]
    asked = [b for b in server.stats.bodies if b["model"] == "lmms"]
    # lmms-eval asked every question once per task pass, each with its one image
    assert len(asked) == (10 + 8) + 4 * (10 + 8)
    assert all(
        sum(p.get("type") == "image_url" for p in b["messages"][0]["content"]) == 1 for b in asked
    )
    # evaluate's CircularEval run scores its first passes as `--mode vanilla` would (the
    # options in their published order), and CircularEval besides
    evaluated = json.loads(done.stdout)
    (en,) = evaluated["scores"]
    (board,) = evaluated["language_boards"]
    (zh,) = board["scores"]
    assert board["language"] == "zh"
    for language, ours, vanilla, circular in (("en", en, 0.4, 0.3), ("zh", zh, 0.5, 0.375)):
        assert ours["vanilla"]["accuracy"] == pytest.approx(vanilla)
        assert ours["circular"]["accuracy"] == pytest.approx(circular)
        once, rotated = lmms[f"bench_{language}"], lmms[f"bench_{language}_circular"]
        assert once["accuracy,none"] == pytest.approx(vanilla), language
        assert rotated["accuracy,none"] == pytest.approx(vanilla), language
        assert rotated["circular_accuracy,none"] == pytest.approx(circular), language
    assert lmms["bench_en"]["unparsed,none"] == 1 and lmms["bench_zh"]["unparsed,none"] == 0


def _utils(folder: Path) -> Any:
    """The `utils.py` a release carries, imported from its place as lmms-eval imports it."""
    write_lmms_eval_tasks(folder, "bench", "v1", [])
    spec = importlib.util.spec_from_file_location("utils", folder / "lmms_eval" / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tasks_ask_as_evaluate_asks_and_read_replies_no_differently(tmp_path):
    (tmp_path / "data").mkdir()
    utils = _utils(tmp_path)
    options = ["a red cube", "a blue ball", "two cats", "none"]
    for language, hint in (("en", None), ("en", "Look left."), ("zh", "看左边。")):
        doc = {"question": "What is shown?", "hint": hint, "options": options, "answer": "C"}
        doc["language"] = language
        for k in range(4):
            shown = [options[i] for i in rotation(4, k)]
            expected = mcq_templates()[language].render(
                hint=hint,
                question="What is shown?",
                options=list(zip(LETTERS, shown, strict=False)),
            )
            rotated = {**doc, "circular_pass": k} if k else doc
            assert utils.doc_to_text(rotated) == expected, (language, k)
            assert shown[LETTERS.index(utils.doc_to_target(rotated))] == "two cats"
    replies = ["B", "(c)", "**D**", "C. two cats", "The answer is B.", "答案是D", "答案：A",
               "two cats", "A or B", "I cannot tell.", "E", "The answer is A, not B.", "",
               "[LMMS_EVAL_REQUEST_FAILED after 5 retries] timeout"]  # fmt: skip
    for reply in replies:
        ours = extract_choice(reply, options).letter
        theirs = utils.letter_of(reply, options)
        assert theirs == ours or (theirs is None and ours in (None, "Z")), reply


def test_a_clip_question_shows_its_keyframes_from_the_release(tmp_path, image_bytes):
    from PIL import Image

    (tmp_path / "data").mkdir()
    (tmp_path / "frames").mkdir()
    frames = []
    for seed in (3, 1, 2):  # time order is the list's, not the names'
        (tmp_path / "frames" / f"f{seed}.png").write_bytes(image_bytes(seed=seed))
        frames.append(f"frames/f{seed}.png")
    utils = _utils(tmp_path)
    keyframe = Image.open(io.BytesIO(image_bytes(seed=9)))
    shown = utils.doc_to_visual({"image": keyframe, "video_frames": frames})
    expected = [Image.open(tmp_path / f).convert("RGB").tobytes() for f in frames]
    assert [im.tobytes() for im in shown] == expected
    (alone,) = utils.doc_to_visual({"image": keyframe, "video_frames": []})
    assert alone.tobytes() == keyframe.convert("RGB").tobytes()
