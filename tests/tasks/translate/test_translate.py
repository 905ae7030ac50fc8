"""The translate stage on real parts: a Prefect build of ingest, extract, generate and
translate over synthetic scenes and clips (template twins written natively, no model), and the
translator model over real HTTP for items no template wrote, with a fault, a malformed reply and
a twin that loses a number, each quarantined with its reason."""

import json
import re
from pathlib import Path

import pytest

from benchfoundry.core.records import (
    CandidateRecord,
    QuarantineRecord,
    ReviewBatchRecord,
    TranslationRecord,
)
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.usefixtures("prefect_api")
NUMBER = re.compile(r"\d+")


def test_a_build_writes_a_chinese_twin_of_every_template_question_and_releases_both(
    tmp_path, monkeypatch
):
    import pandas as pd
    import yaml

    from benchfoundry.devtools.synthetic import write_corpus
    from benchfoundry.devtools.synthetic_video import write_clips
    from benchfoundry.devtools.testserver import Oracle, Script, TestServer
    from benchfoundry.flows.build import build

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    write_corpus(tmp_path / "scenes", n_objects=4, n_text=2, seed=5, n_contact=2, n_flat=2)
    write_clips(tmp_path / "video", 3, 2, seed=5)
    oracle = Oracle(tmp_path / "run")  # a VLM that knows the keys: questions reach the release
    with TestServer(Script(default=lambda request: oracle.answer(request.text))) as server:
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            "name: twins\n"
            "sources:\n"
            "  - {kind: folder, path: scenes/images}\n"
            "  - {kind: videos, path: video/procedures, annotations: video/procedures/segments.csv}\n"
            f"models: {{text_only: [blind/random], vlm: ['openai/oracle@{server.base_url}']}}\n"
            "stages: [ingest, extract, generate, filter, consensus, select, translate, review, "
            "publish, evaluate]\n"
            "options: {generate: {llm: false}, ingest: {keyframes: 2}, select: {target: 4},\n"
            "          translate: {languages: [zh], include: all}, review: {auto: true},\n"
            "          publish: {allow_unreviewed: true, letter_tolerance: 1, longest_answer_share: 1,\n"
            "                    card_results: true},\n"
            f"          evaluate: {{models: ['openai/oracle@{server.base_url}'], mode: vanilla}}}}\n"
            "output: run\n"
        )
        summary = build(str(spec))
        bodies = list(server.stats.bodies)
    run = RunFolder(tmp_path / "run")
    candidates = {c.question_id: c for c in run.table(CandidateRecord).records()}
    twins = {t.question_id: t for t in run.table(TranslationRecord).records()}
    templates = [c for c in candidates.values() if c.generator.startswith("template:")]
    assert len(templates) > 30 and len(twins) >= 0.95 * len(templates)
    for qid, twin in twins.items():
        english = candidates[qid]
        assert twin.language == "zh" and twin.method == "template"
        assert twin.answer == english.answer and len(twin.options) == len(english.options)
        assert re.search("[\u4e00-\u9fff]", twin.question), twin.question
        for en, zh in zip(english.options, twin.options, strict=True):
            assert NUMBER.findall(en) == NUMBER.findall(zh), (en, zh)
    kinds = {candidates[q].generator for q in twins}
    assert {"template:count", "template:action_label", "template:action_order"} <= kinds
    translate = summary.of("translate")
    assert translate.by_method == {"template": len(twins)} and translate.items == len(candidates)

    # The release: English as before, each twin in data/zh with its item's id, image and key.
    release = summary.of("publish")
    folder = tmp_path / "releases" / "twins" / release.version
    en = pd.concat(pd.read_parquet(p) for p in sorted((folder / "data").glob("test-*.parquet")))
    zh = pd.concat(
        pd.read_parquet(p) for p in sorted((folder / "data" / "zh").glob("test-*.parquet"))
    )
    assert set(en.language) == {"en"} and set(zh.language) == {"zh"} and len(zh) == len(en)
    pairs = en[["question_id", "answer", "image_id"]].merge(
        zh[["question_id", "answer", "image_id", "question"]],
        on="question_id",
        suffixes=("", "_zh"),
    )
    assert len(pairs) == len(en)
    assert (pairs.answer == pairs.answer_zh).all() and (pairs.image_id == pairs.image_id_zh).all()
    assert all(re.search("[\u4e00-\u9fff]", q) for q in pairs.question)
    card = (folder / "README.md").read_text(encoding="utf-8").split("---")[1]
    configs = {
        c["config_name"]: c["data_files"][0]["path"] for c in yaml.safe_load(card)["configs"]
    }
    assert configs == {"default": "data/test-*", "zh": "data/zh/test-*"}
    # VLMEvalKit reads a TSV with pandas (sep='\t'): the CN file row for row, in Chinese.
    cn = pd.read_csv(folder / "twins_CN.tsv", sep="\t")
    assert len(cn) == len(zh) and (folder / "twins_EN.tsv").is_file()
    assert all(re.search("[\u4e00-\u9fff]", q) for q in cn.question)
    # The two files pair as MMBench's do: a twin keeps its English item's index and id.
    en_tsv = pd.read_csv(folder / "twins_EN.tsv", sep="\t")
    paired = en_tsv.merge(cn, on=["index", "question_id"], suffixes=("", "_cn"))
    assert len(paired) == len(cn) and (paired.answer == paired.answer_cn).all()
    assert summary.of("publish").written
    # Evaluation asks each model in both languages and measures its loss on the same items: the
    # oracle knows the English keys only, so it loses everything in Chinese.
    evaluation = summary.of("evaluate")
    # English is the headline board; Chinese a board of its own
    assert evaluation.dataset.questions == len(en)
    assert evaluation.dataset.languages == {"en": len(en), "zh": len(zh)}
    (score,) = evaluation.scores
    assert score.vanilla.accuracy == 1.0
    assert evaluation.language_boards[0].scores[0].vanilla.accuracy == 0.0
    assert score.by_language["en"]["vanilla"].accuracy == 1.0
    assert score.by_language["zh"]["vanilla"].accuracy == 0.0
    (gap,) = evaluation.language_gaps
    assert (gap.from_, gap.to, gap.items, gap.difference) == ("en", "zh", len(en), 1.0)
    assert gap.p_value < 0.01
    assert evaluation.model_dump(mode="json")["language_gaps"][0]["from"] == "en"
    # The report of the run shows the gap per model, with its interval, in both forms.
    from benchfoundry.tasks.evaluate.leaderboard import write_report

    files = write_report([tmp_path / "run"], tmp_path / "report")
    board = Path(files.leaderboard_markdown).read_text(encoding="utf-8")
    assert "## Across languages: twins" in board
    assert re.search(r"\| en 100\.0% \| zh 0\.0% \| \+100\.0% \| \[\+\d", board)
    assert "Across languages: twins" in Path(files.html).read_text(encoding="utf-8")
    # Each twin was asked in Chinese (the `mcq_zh` prompt), once (vanilla), over HTTP.
    in_chinese = [b for b in bodies if "问题：" in json.dumps(b, ensure_ascii=False)]
    assert len(in_chinese) == len(zh)
    again = build(str(spec), stages=["translate"]).of("translate")
    assert again.twins_added == 0 and again.already_done == len(twins)
    # Published again after its evaluation (card_results), the same questions make a child
    # version whose card reports the evaluation: accuracy per language and the gap per model.
    carded = build(str(spec), stages=["publish"]).of("publish")
    assert carded.written and carded.version != release.version
    child = tmp_path / "releases" / "twins" / carded.version
    manifest = json.loads((child / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["parent"] == release.version and manifest["base_version"] == release.version
    assert (child / "data" / "zh").is_dir() and manifest["languages"] == {
        "en": len(en),
        "zh": len(zh),
    }
    results = (child / "README.md").read_text(encoding="utf-8").split("## Results", 1)[1]
    assert f"Evaluated by benchfoundry on version `{release.version}`" in results
    assert "| model | sees | en vanilla | en circular | zh vanilla | zh circular |" in results
    oracle = f"openai/oracle@{server.base_url}"
    # (escaped for Markdown: "[" as "\[", ">" as "&gt;")
    assert re.search(
        rf"\| {re.escape(oracle)} \| pixels \| 100\.0% \\\[[\d.]+%, 100\.0%\\\] \|", results
    )
    assert f"| {oracle} | en | zh | {len(en)} | 100.0% -&gt; 0.0% | +100.0% |" in results
    assert "## Results" not in (folder / "README.md").read_text(encoding="utf-8")
    assert not build(str(spec), stages=["publish"]).of("publish").written  # nothing new
    # Twins were reviewed as items of their own (the automatic reviewer accepted the twins of
    # the items it accepted); a person's decisions on twins make the next release: a rejected
    # twin leaves it, an edited one is released as edited, each row saying who decided.
    from benchfoundry.decisions.reviews import Decision, record

    assert set(zh.review_state) == {"auto"}
    assert {b.language for b in run.table(ReviewBatchRecord).records()} == {None, "zh"}
    gone, edited = sorted(zh.question_id)[:2]
    added, _, refused = record(
        run,
        [
            Decision(f"{gone}@zh", "li", "reject", reason="mistranslated"),
            Decision(f"{edited}@zh", "li", "edit", new_question="改过的问题？"),
        ],
        "file",
    )
    assert (added, refused) == (2, [])
    second = build(str(spec), stages=["publish"]).of("publish")
    assert second.left_out["twin zh: twin rejected"] == 1
    zh2 = pd.concat(
        pd.read_parquet(p)
        for p in sorted(
            (tmp_path / "releases" / "twins" / second.version / "data" / "zh").glob("*.parquet")
        )
    ).set_index("question_id")
    assert gone not in zh2.index and len(zh2) == len(zh) - 1
    assert zh2.loc[edited, "question"] == "改过的问题？"
    card2 = (tmp_path / "releases" / "twins" / second.version / "README.md").read_text("utf-8")
    assert f"the {len(zh2)} twins in `zh`" in card2
    assert "## Results" not in card2  # the evaluation was of other questions
    assert f"1 accepted (or edited) by a person, {len(zh2) - 1} by the automatic reviewer" in card2
    assert zh2.loc[edited, "review_state"] == "decided" and list(zh2.loc[edited, "reviewers"]) == [
        "li"
    ]


def test_the_translator_writes_the_other_items_and_bad_twins_are_quarantined(tmp_path):
    from benchfoundry.devtools.testserver import Script, TestServer
    from benchfoundry.tasks.translate.options import TranslateOptions
    from benchfoundry.tasks.translate.stage import translate_all

    run = RunFolder(tmp_path / "run")
    questions = {
        "q-good": ("Which fruit is on the plate?", ["an apple", "a pear", "a plum", "a fig"]),
        "q-number": ("How much does the ticket cost?", ["3 euros", "5 euros", "8 euros", "9 euros"]),
        "q-garbled": ("What is the man holding?", ["a cup", "a book", "a phone", "a key"]),
        "q-fault": ("Where is the dog?", ["on the sofa", "under the table", "in the garden", "at the door"]),
    }  # fmt: skip
    run.table(CandidateRecord).append(
        [
            CandidateRecord(
                question_id=q, image_id="i" * 64, dimension="scene_understanding", question=text,
                hint=None, options=options, answer="B", category=None, l2_category=None,
                split=None, generator="llm:writer", prompt_id=None, prompt_hash=None,
                evidence=[], source="test", meta={}, raw_output=None,
            )
            for q, (text, options) in questions.items()
        ]
    )  # fmt: skip
    chinese = {
        "Which fruit": ("盘子里是什么水果？", ["苹果", "梨", "李子", "无花果"]),
        "How much": ("这张票多少钱？", ["3欧元", "五欧元", "8欧元", "9欧元"]),  # loses the 5
        "Where is": ("狗在哪里？", ["在沙发上", "在桌子下面", "在花园里", "在门口"]),
    }

    def reply(request) -> str:
        if "What is the man holding" in request.text:
            return "Sorry, I cannot translate this."
        text, options = next(v for k, v in chinese.items() if k in request.text)
        return json.dumps({"question": text, "hint": None, "options": options}, ensure_ascii=False)

    with TestServer(Script(default=reply)) as server:
        server.inject("500", times=1)  # retried by the gateway: the item is still translated
        summary = translate_all(
            run,
            TranslateOptions(include="all"),
            {"translator": [f"openai/translator@{server.base_url}"]},
        )
    twins = {t.question_id: t for t in run.table(TranslationRecord).records()}
    assert set(twins) == {"q-good", "q-fault"}
    assert (
        twins["q-good"].options == ["苹果", "梨", "李子", "无花果"]
        and twins["q-good"].answer == "B"
    )
    assert twins["q-good"].method.startswith("llm:") and twins["q-good"].prompt_id.startswith(
        "translate_item@"
    )
    refused = {q.ref_id: q for q in run.table(QuarantineRecord).records() if q.stage == "translate"}
    assert refused["q-number:zh"].reason == "number_lost" and "5" in refused["q-number:zh"].detail
    assert refused["q-garbled:zh"].reason == "malformed_translation"
    assert "raw output: Sorry" in refused["q-garbled:zh"].detail
    assert summary.refused_by_reason == {"malformed_translation": 1, "number_lost": 1}
    # No translator named: the items no template wrote are refused, saying so.
    other = RunFolder(tmp_path / "other")
    other.table(CandidateRecord).append(run.table(CandidateRecord).records()[:1])
    alone = translate_all(other, TranslateOptions(include="all"), {})
    assert alone.refused_by_reason == {"no_translator": 1} and alone.twins_added == 0


def _item(
    qid, question, options, generator, *, hint=None, meta=None, slots=None, option_slots=None
):
    return CandidateRecord(
        question_id=qid, image_id="i" * 64, dimension="instance_attributes", question=question,
        hint=hint, options=options, answer="C", category=None, l2_category=None, split=None,
        generator=generator, prompt_id=None, prompt_hash=None, evidence=[], source="test",
        meta=meta or {}, raw_output=None, slots=slots or {}, option_slots=option_slots or [],
    )  # fmt: skip


def _seed_parts(kind, slots, option_slots):
    return {
        "template_kind": kind,
        "template_slots": json.dumps(slots),
        "template_option_slots": json.dumps(option_slots),
    }


def test_seed_questions_that_carry_their_parts_are_written_natively(tmp_path):
    """A question read from a source whose row gave its kind and slots (the synthetic scenes'
    reference questions) gets its twin without a model; a reading question keeps its printed
    words; one with a hint, or with no parts, still needs the translator, whatever its text."""
    from benchfoundry.tasks.translate.options import TranslateOptions
    from benchfoundry.tasks.translate.stage import translate_all

    run = RunFolder(tmp_path / "run")
    colours = ["blue", "orange", "black", "green"]
    words = ["CAT", "DOG", "SUN", "MAP"]
    colour = _seed_parts("shape_colour", {"noun": "triangle"}, [{"colour": c} for c in colours])
    run.table(CandidateRecord).append(
        [
            _item("s-colour", "What colour is the triangle?", colours, "seed:tsv", meta=colour),
            _item(
                "s-count", "How many circles are there in the image?", ["3", "2", "5", "4"],
                "seed:tsv", meta=_seed_parts(
                    "count_shape", {"noun": "circle"}, [{"number": n} for n in "3254"]
                ),
            ),
            _item(
                "s-read", "Which word is written in the image?", words, "seed:tsv",
                meta=_seed_parts("read_word", {}, [{"text": w} for w in words]),
            ),
            _item(
                "s-hint", "What colour is the triangle?", colours, "seed:tsv", hint="Look closely.",
                meta=colour,
            ),
            # the words of a question in the grammar, but no parts: the text is not read back
            _item("s-bare", "What colour is the square?", colours, "seed:tsv"),
            # parts that do not write the item's own English are not its parts
            _item("s-other", "What colour is the square?", colours, "seed:tsv", meta=colour),
        ]
    )  # fmt: skip
    summary = translate_all(run, TranslateOptions(include="all"), {})
    twins = {t.question_id: t for t in run.table(TranslationRecord).records()}
    assert set(twins) == {"s-colour", "s-count", "s-read"}
    assert twins["s-colour"].question == "图中的三角形是什么颜色？"
    assert twins["s-colour"].options == ["蓝色", "橙色", "黑色", "绿色"]
    assert twins["s-count"].question == "图中有多少个圆形？"
    assert twins["s-count"].options == ["3", "2", "5", "4"] and twins["s-read"].options == words
    assert {t.method for t in twins.values()} == {"template"} and twins["s-read"].answer == "C"
    assert summary.refused_by_reason == {"no_translator": 3}
    # the closing report says so, with the count, an example and the fix
    said = "\n".join(summary.lines())
    assert "WARNING: 3 twin(s) not written" in said and "models.translator" in said
    # and so does the command, run as a user runs it (its own process, exit 0)
    import os
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    (tmp_path / "pics").mkdir()
    spec.write_text(
        "name: t\nsources: [{kind: folder, path: pics}]\noptions: {translate: {include: all}}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    env.update(PREFECT_HOME=str(tmp_path / "home"), DO_NOT_TRACK="1")
    done = subprocess.run(
        [sys.executable, "-m", "benchfoundry", "translate", "--out", str(run.root), "--spec",
         str(spec)], capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "WARNING: 3 twin(s) not written" in done.stdout, done.stdout[-2000:]


def test_a_template_twin_is_written_from_its_slots(tmp_path):
    """The Chinese comes from the parts, not from the English text: the same question with
    another colour in its slots is another Chinese question; a label outside the vocabulary
    (an annotation the demo's tables do not know) goes to the translator."""
    from benchfoundry import meaning
    from benchfoundry.tasks.translate.options import TranslateOptions
    from benchfoundry.tasks.translate.stage import translate_all

    options = [{"number": n} for n in ("2", "1", "3", "4")]
    assert meaning.written("count", {"colour": "red"}, options, "zh") == (
        "图中有多少个红色物体？",
        ["2", "1", "3", "4"],
    )
    assert meaning.question("count", {"colour": "blue"}, "zh") == "图中有多少个蓝色物体？"
    assert meaning.question("count", {"colour": "blue"}, "en") == (
        "How many blue objects are there in the image?"
    )
    relation = [{"relation": r} for r in ("above", "below", "to the left of", "to the right of")]
    named = {"object": "red", "other": "green"}
    assert meaning.written("relative_position", named, relation, "zh") == (
        "红色物体在绿色物体的什么位置？",
        ["上方", "下方", "左边", "右边"],
    )
    known = {"label": "Moving red circle up", "template": "Moving [something] up",
             "placeholders": '["red circle"]'}  # fmt: skip
    assert meaning.option("action_label", known, "zh") == "把红色圆形向上移动"
    step = {"label": "lift the blue square up", "verb": "lift-up", "action_noun": "blue square"}
    assert meaning.option("action_label", step, "zh") == "把蓝色正方形向上抬起"
    with pytest.raises(meaning.NoForm):
        meaning.option("action_label", {"label": "Moving red circle up"}, "zh")
    with pytest.raises(meaning.NoForm):
        meaning.option("action_label", {**known, "placeholders": '["kettle"]'}, "zh")

    run = RunFolder(tmp_path / "run")
    labels = ["Opening a kettle", "Closing a kettle", "Moving red circle up", "Pouring tea"]
    run.table(CandidateRecord).append(
        [
            _item(
                "t-count", "How many red objects are there in the image?", ["2", "1", "3", "4"],
                "template:count", slots={"colour": "red"}, option_slots=options,
            ),
            _item(
                "t-action", "What action is performed in the video?", labels,
                "template:action_label",
                option_slots=[{"label": x} for x in labels[:2]] + [known, {"label": labels[3]}],
            ),
        ]
    )  # fmt: skip
    summary = translate_all(run, TranslateOptions(include="all"), {})
    (twin,) = run.table(TranslationRecord).records()
    assert (twin.question_id, twin.question) == ("t-count", "图中有多少个红色物体？")
    assert twin.options == ["2", "1", "3", "4"] and twin.answer == "C"
    assert summary.refused_by_reason == {"no_translator": 1}
    english = {c.question_id: c for c in run.table(CandidateRecord).records()}
    assert english["t-count"].question == "How many red objects are there in the image?"


def test_the_chinese_reads_as_a_native_annotator_writes_it():
    """Each kind's Chinese is written once, in its entry, as a person would ask it: no
    「相对于…在哪里」, no chain of 「然后」, 「放下」 for put down, one word for a rectangle."""
    from benchfoundry import meaning

    assert meaning.question("action_label", {}, "zh") == "视频中的物体发生了什么动作？"
    assert meaning.question("layout", {"axis": "x"}, "zh") == "物体在图像的左侧还是右侧？"
    assert meaning.question("layout", {"axis": "y"}, "zh") == "物体在图像的上半部分还是下半部分？"
    steps = [
        {"label": "x", "verb": v, "action_noun": "red square"}
        for v in ("lift-up", "move-left", "put-down", "make-bigger")
    ]
    order = {"actions": json.dumps(steps), "labels": json.dumps(["a", "b", "c", "d"])}
    assert meaning.option("action_order", order, "zh") == (
        "先把红色正方形向上抬起，再把红色正方形向左移动，然后把红色正方形放下，最后把红色正方形变大"
    )
    three = {**order, "actions": json.dumps(steps[:3])}
    assert meaning.option("action_order", three, "zh") == (
        "先把红色正方形向上抬起，再把红色正方形向左移动，最后把红色正方形放下"
    )
    assert meaning.question("position", {"colour": "red", "shape": "rectangular"}, "zh") == (
        "红色长方形物体在图中的什么位置？"
    )
    assert meaning.option("identity", {"noun": "rectangle"}, "zh") == "长方形"


def test_the_chinese_vocabulary_covers_every_part_the_templates_use():
    from benchfoundry.devtools.synthetic_video import COLOURS as CLIP_COLOURS
    from benchfoundry.devtools.synthetic_video import STEPS, TEMPLATES
    from benchfoundry.extractors.shapes import SHAPE_NAMES
    from benchfoundry.meaning import zh
    from benchfoundry.tasks.generate.templates import COLOURS, POSITIONS, RELATIONS, SHAPES

    assert set(COLOURS) | set(CLIP_COLOURS) <= set(zh.COLOURS)
    assert set(SHAPE_NAMES) <= set(zh.SHAPES) and set(SHAPES) <= set(zh.SHAPE_ADJECTIVES)
    assert set(POSITIONS) <= set(zh.POSITIONS) and set(RELATIONS) <= set(zh.RELATIONS)
    assert set(TEMPLATES) <= set(zh.TEMPLATES) and set(STEPS) <= set(zh.VERBS)
