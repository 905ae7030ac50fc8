"""The generate stage: taxonomies, validation, letters, the template generator against truth,
and the LLM path against the real test server."""

import json

import pytest

from benchfoundry.core.records import CandidateRecord, QuarantineRecord
from benchfoundry.core.taxonomy import TEMPLATE_KINDS, TaxonomyError, load_taxonomy
from benchfoundry.devtools.generate_check import template_key_accuracy
from benchfoundry.devtools.synthetic import write_corpus
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.models import FolderSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.stage import run as extract_stage
from benchfoundry.tasks.generate.drafts import (
    Draft,
    Rules,
    letter_distribution,
    to_candidate,
    validate,
)
from benchfoundry.tasks.generate.options import GenerateOptions
from benchfoundry.tasks.generate.stage import generate_all
from benchfoundry.tasks.generate.templates_temporal import TEMPORAL_KINDS
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.stage import run as ingest_stage


def test_taxonomies_load_with_their_levels(tmp_path):
    seed, mmbench, mmstar = (load_taxonomy(n) for n in ("seed_bench", "mmbench", "mmstar"))
    assert len(seed.leaves()) == 12 and len(mmbench.leaves()) == 20 and len(mmstar.leaves()) == 18
    temporal = [d.id for d in seed.leaves() if "segments" in d.needs]
    assert temporal == ["action_recognition", "action_prediction", "procedure_understanding"]
    assert len([d for d in mmbench.dimensions if d.parent is None]) == 2
    assert mmbench.path("ocr") == ["perception", "fine_grained_single_instance_perception", "ocr"]
    assert seed.get("visual_reasoning").role == "generator_reasoning"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\nversion: 1\ndimensions:\n  - {id: a, name: A, parent: nowhere}\n")
    with pytest.raises(TaxonomyError, match="nowhere"):
        load_taxonomy(bad)
    with pytest.raises(TaxonomyError, match="known: mmbench, mmstar, seed_bench"):
        load_taxonomy("seedbench")


def _draft(**kw):
    base = {
        "image_id": "i" * 64,
        "dimension": "instances_counting",
        "question": "How many cats are there?",
        "correct": "3",
        "distractors": ["2", "4", "5"],
        "generator": "test",
    }
    return Draft(**{**base, **kw})


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"question": " "}, "empty_question"),
        ({"dimension": "astrology"}, "unknown_dimension"),
        ({"distractors": []}, "too_few_options"),
        ({"distractors": ["1", "2", "4", "5"]}, "too_many_options"),
        ({"distractors": ["2", "", "4"]}, "empty_option"),
        ({"distractors": ["2", "3.", "4"]}, "duplicate_options"),
        ({"distractors": ["2", "None of the above", "4"]}, "catch_all_option"),
        (
            {"question": "Is the big grey cat sleeping?", "correct": "the big grey cat"},
            "answer_in_question",
        ),
    ],
)
def test_validation_refuses_with_a_reason(change, reason):
    refusal = validate(_draft(**change), Rules(), {"instances_counting"})
    assert refusal is not None and refusal.reason == reason and refusal.detail
    assert validate(_draft(), Rules(), {"instances_counting"}) is None


def test_letters_are_stable_and_spread():
    one = to_candidate(_draft(), seed=0, rules=Rules())
    assert to_candidate(_draft(), seed=0, rules=Rules()) == one
    assert one.options[ord(one.answer) - 65] == "3"
    spread = letter_distribution(
        [
            to_candidate(_draft(question=f"How many cats in picture {i}?"), 0, Rules())
            for i in range(400)
        ]
    )
    assert set(spread) == set("ABCD") and min(spread.values()) > 70
    long = to_candidate(
        _draft(distractors=["2", "4", "a much much longer option than the rest"]), 0, Rules()
    )
    assert "length_outlier" in long.flags


def test_template_answer_keys_match_the_truth(tmp_path):
    # (`bench/generate_accuracy.py` measures more: 40 scenes and more, the hard drawings)
    result = template_key_accuracy(tmp_path, scenes=16, contact=8)
    assert result.questions > 200
    assert result.accuracy >= 0.98, result.wrong[:5]
    # Every kind asked of pictures (the temporal kinds are asked of clips: test_video_build.py).
    assert set(result.by_kind) == set(TEMPLATE_KINDS) - set(TEMPORAL_KINDS)
    counting = result.per_dimension["instances_counting"]
    assert counting["not_asked:no_objects"] == 4  # the text scenes
    assert result.per_dimension["text_understanding"]["not_asked:no_text"] == 20


@pytest.fixture
def run_with_facts(tmp_path):
    write_corpus(tmp_path / "corpus", n_objects=2, n_text=1, seed=41)
    run = RunFolder(tmp_path / "run")
    ingest_stage(
        StageRun.make(
            run, sources=[FolderSource(path=tmp_path / "corpus" / "images")], ingest=IngestOptions()
        )
    )
    extract_stage(StageRun.make(run, extract=ExtractOptions()))
    return run


def test_llm_questions_are_validated_repaired_or_refused(run_with_facts):
    from benchfoundry.devtools.testserver import Script, TestServer

    good = json.dumps(
        {
            "question": "Which shape is closest to the top?",
            "options": ["a square", "a circle", "a triangle", "a star"],
            "answer": "B",
            "evidence": ["circle at (10, 5, 40, 35)"],
        }
    )
    catch_all = json.dumps(
        {
            "question": "What is shown?",
            "options": ["a", "b", "c", "All of the above"],
            "answer": "D",
            "evidence": [],
        }
    )
    script = Script(
        sequence=[
            "not json at all",
            good,
            "```json\n" + good.replace("closest to the top", "near the top edge") + "\n```",
            catch_all,
            "still not json",
            "{broken",
        ],
        default="{broken",
    )
    with TestServer(script) as server:
        options = GenerateOptions(templates=False, llm_dimensions=["scene_understanding"])
        summary = generate_all(
            run_with_facts,
            options,
            "seed_bench",
            {"generator": [f"openai/writer@{server.base_url}"]},
        )
        requests = server.stats.requests
    assert summary.per_dimension["scene_understanding"]["llm_requested"] == 3
    assert requests >= 4, "three questions and at least one repair"
    quarantine = [
        q for q in run_with_facts.table(QuarantineRecord).records() if q.stage == "generate"
    ]
    assert {q.reason for q in quarantine} <= {"malformed_output", "catch_all_option"} and quarantine
    assert all("raw output" in q.detail for q in quarantine if q.reason == "malformed_output")
    candidates = [
        c for c in run_with_facts.table(CandidateRecord).records() if c.generator.startswith("llm:")
    ]
    assert candidates and all(
        c.prompt_id.startswith("generate_scene_understanding@") and c.raw_output for c in candidates
    )
    assert all(len(c.options) == 4 and c.dimension == "scene_understanding" for c in candidates)
    body = server.stats.bodies[0]
    assert body["response_format"]["json_schema"]["schema"]["required"] == [
        "question",
        "options",
        "answer",
        "evidence",
    ]
    assert "Visual information about the image" in body["messages"][-1]["content"]


def test_seed_questions_are_validated_and_mapped(tmp_path):
    from benchfoundry.devtools.broken_inputs import write_faulty_tsv
    from benchfoundry.sources.models import TsvSource
    from benchfoundry.tasks.generate.stage import refused_candidates

    write_corpus(tmp_path / "corpus", n_objects=3, n_text=1, seed=43)
    write_faulty_tsv(tmp_path / "faulty.tsv")
    run = RunFolder(tmp_path / "run")
    mapping = {
        "instances counting": "instances_counting",
        "instance attributes": "instance_attributes",
        "text understanding": "text_understanding",
    }
    ingest_stage(
        StageRun.make(
            run,
            sources=[
                TsvSource(path=tmp_path / "corpus" / "questions.tsv"),
                TsvSource(path=tmp_path / "faulty.tsv"),
            ],
            ingest=IngestOptions(dimension_map=mapping),
        )
    )
    seeds = run.table(CandidateRecord).records()
    assert {s.dimension for s in seeds} == {
        "instances_counting",
        "instance_attributes",
        "text_understanding",
        "colour",
    }
    extract_stage(StageRun.make(run, extract=ExtractOptions(ocr="none", captioner="none")))
    summary = generate_all(run, GenerateOptions(templates=False), "seed_bench", {})
    assert summary.seeds_refused_by_reason == {"unknown_dimension": 2}
    refused = refused_candidates(run)
    assert refused == {s.question_id for s in seeds if s.dimension == "colour"}


@pytest.mark.parametrize(
    "options, refused",
    [
        (["-5", "5", "0"], False),
        (["C", "C++", "C#"], False),
        (["3", "3.0", "4"], True),
        (["All of these", "a cat", "a dog"], True),
        (["Both A and B", "a cat", "a dog"], True),
        (["None", "a cat", "a dog"], True),
    ],
)
def test_options_compare_with_their_signs(options, refused):
    draft = _draft(correct=options[0], distractors=options[1:], question="Which one is it?")
    assert (validate(draft, Rules(), {"instances_counting"}) is not None) == refused


def test_answer_in_question_spares_questions_that_list_their_options():
    listed = _draft(
        question="Is the cup on the left or right of the plate?",
        correct="left",
        distractors=["right"],
    )
    assert validate(listed, Rules(), {"instances_counting"}) is None
    leaked = _draft(
        question="What colour is the red car?", correct="red", distractors=["blue", "green"]
    )
    assert validate(leaked, Rules(), {"instances_counting"}).reason == "answer_in_question"
    assert (
        validate(
            _draft(question="Is it reddish?", correct="red", distractors=["blue"]),
            Rules(),
            {"instances_counting"},
        )
        is None
    )


def test_inconsistent_generate_settings_are_refused():
    with pytest.raises(ValueError, match="min_options <= n_options <= max_options"):
        GenerateOptions(min_options=4, max_options=2, n_options=6)


def test_a_deeply_nested_reply_is_malformed_not_a_crash():
    from benchfoundry.tasks.generate.llm import parse

    with pytest.raises(ValueError, match="nested too deeply"):
        parse("[" * 100000 + "]" * 100000, 4)


def test_the_summary_spreads_letters_by_option_count(run_with_facts):
    summary = generate_all(run_with_facts, GenerateOptions(llm=False), "seed_bench", {})
    assert (
        summary.letters_by_option_count
        and sum(sum(d.values()) for d in summary.letters_by_option_count.values())
        == summary.candidates
    )
    assert all(set(d) <= set("ABCD"[: int(n)]) for n, d in summary.letters_by_option_count.items())
    assert summary.not_asked["text_understanding"] == {"no_text": 2}
    assert summary.not_asked["instances_counting"] == {"no_objects": 1}
    assert summary.per_dimension["instances_counting"]["not_asked:no_objects"] == 1
    assert "instances_counting: no_objects 1" in summary.markdown()
