"""`in_build`: a model evaluated on a release it helped build is marked with its roles (by the
same model identity: a catalogue name and its spec string are one model), a held-out model and
a chance baseline that was only reported are not; the mark (role keys, and which way each role
biases the score) and a sentence saying that direction reach `--json`, the summary's text, the
leaderboard and the report."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from benchfoundry.devtools.testserver import TestServer
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.tasks.evaluate.in_build import InBuild, biased_sentence, build_roles, mark
from benchfoundry.tasks.evaluate.leaderboard import board, markdown
from tests.tasks.evaluate.test_evaluate import evaluate, scripted
from tests.tasks.publish.test_publish import _options
from tests.tasks.publish.test_publish import run as run  # noqa: F401  the fixture (a reviewed run)


def test_a_release_builder_is_marked_and_a_held_out_model_is_not(run, tmp_path):  # noqa: F811
    with TestServer(scripted()) as server:
        builder = f"openai/good@{server.base_url}"
        held_out = f"openai/other@{server.base_url}"
        stage = StageRun.make(run, publish=_options(tmp_path, letter_tolerance=0.5))
        stage.name = "bench"
        stage.models = {"vlm": [builder], "text_only": ["smollm2"]}
        STAGES["publish"].run(stage)
        release = tmp_path / "releases" / "bench"
        models = [builder, held_out, "blind-longest", "blind-random"]
        summary = evaluate(tmp_path / "eval", release, models, mode="vanilla")
    marked = {s.model: [r.role for r in s.in_build] for s in summary.scores}
    assert marked == {
        builder: ["vlm"],
        held_out: [],
        # the catalogue's blind-longest is blind/longest, a counted filter baseline
        "blind-longest": ["text_only"],
        # blind/random was a chance baseline: reported, never counted
        "blind-random": [],
    }
    assert summary.dataset.built_by["vlm"] == [builder]
    assert summary.dataset.built_by_notes == []

    dumped = json.loads(summary.model_dump_json())  # what --json prints
    in_build = {s["model"]: s["in_build"] for s in dumped["scores"]}
    assert in_build[held_out] == []
    assert in_build[builder] == [{"role": "vlm", "family": None, "bias": "upward"}]
    assert in_build["blind-longest"] == [{"role": "text_only", "family": None, "bias": "downward"}]
    text = "\n".join(summary.lines())
    assert f"{builder} took part in building bench" in text
    assert "biased upward" in text and "blind-longest" in text and "biased downward" in text
    assert "vision-language ensemble" in summary.markdown()

    rows = board([summary])
    by = {r.model_name: r for r in rows if r.kind == "model"}
    assert [r.role for r in by[builder].in_build] == ["vlm"] and by[held_out].in_build == []
    board_text = markdown(rows)
    assert "biased upward" in board_text and held_out + " took part" not in board_text
    assert "vision-language ensemble" in board_text and "text-only filter" in board_text
    saved = pq.read_table(tmp_path / "eval" / "reports" / "evaluation" / "leaderboard.parquet")
    assert pa.types.is_list(saved.schema.field("in_build").type)
    stored = {r["model_name"]: r["in_build"] for r in saved.to_pylist()}
    assert stored[builder] == [{"role": "vlm", "family": None, "bias": "upward"}]
    page = (tmp_path / "eval" / "reports" / "evaluation" / "report.html").read_text("utf-8")
    assert "biased upward" in page and "biased downward" in page


def test_the_sentence_says_which_way_each_role_biases_the_score():
    down = biased_sentence("blind-longest", [InBuild(role="text_only", bias="downward")], "demo")
    assert "text-only filter" in down and down.endswith("biased downward.")
    assert "removed the questions it answered without the image" in down
    up = biased_sentence("m", [InBuild(role="generator", bias="upward")], "demo")
    assert up.endswith("biased upward.") and "wrote questions" in up
    both = biased_sentence(
        "m",
        [InBuild(role="generator", bias="upward"), InBuild(role="text_only", bias="downward")],
        "demo",
    )
    assert "no direction we can tell" in both
    kin = biased_sentence("q", [InBuild(role="vlm", family="qwen", bias="upward")], "demo")
    assert kin.startswith("q is of the family of models that built demo") and "upward" in kin


def write_release(folder, spec: dict, rows: list[dict]) -> None:
    (folder / "data").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"name": "x", "version": "v", "spec": spec}))
    table = pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [
                ("meta_info", pa.struct([("generator", pa.string())])),
                ("reviewers", pa.list_(pa.string())),
            ]
        ),
    )
    pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet")


def test_roles_from_the_manifest_and_the_rows(tmp_path):
    spec = {
        "stages": ["generate", "filter", "consensus", "review", "publish"],
        "models": {"generator": ["openai/writer"], "judge": ["openai/reader"]},
        "options": {"filter": {"blind": ["blind/similar"], "chance": ["blind/random"]}},
    }
    rows = [
        {"meta_info": {"generator": "llm:openai/gen-2"}, "reviewers": ["auto"]},
        {"meta_info": {"generator": "template:count"}, "reviewers": ["ann", "openai/checker"]},
    ]
    write_release(tmp_path, spec, rows)
    built = build_roles(tmp_path)
    assert built.roles == {
        "generator": ["openai/writer", "openai/gen-2"],
        "text_only": ["blind/similar", "smollm2"],
        "vlm": ["facts-smollm2"],
        "judge": ["openai/reader"],
        "reviewer": ["ann", "openai/checker"],
    }
    # text_only and vlm were left out while filter and consensus ran: their defaults built it
    assert built.notes == []
    found = mark(
        ["openai/gen-2", "blind-similar", "blind/random", "openai/checker", "openai/new"],
        built,
        {},
    )
    assert [r.role for r in found["openai/gen-2"]] == ["generator"]
    assert found["blind/random"] == [] and found["openai/new"] == []
    assert found["openai/checker"] == [InBuild(role="reviewer", bias="upward")]
    assert found["blind-similar"] == [], "no catalogue given: a name that does not resolve"


def test_a_reader_of_all_the_facts_is_held_out_from_a_release_built_by_partial_readers(tmp_path):
    from benchfoundry.gateway.assemble import default_catalogue

    readers = ["facts-smollm2-captions", "facts-smollm2-objects", "facts-smollm2-text"]
    spec = {"stages": ["consensus", "publish"], "models": {"vlm": readers}}
    write_release(tmp_path, spec, [{"meta_info": {"generator": "template:count"}, "reviewers": []}])
    built = build_roles(tmp_path)
    assert built.roles["vlm"] == readers
    catalogue = default_catalogue()
    found = mark(["facts-smollm2", "facts/smollm2", *readers], built, catalogue)
    # Provider and inner model are the same; the parts of the facts read are not.
    assert found["facts-smollm2"] == [] and found["facts/smollm2"] == []
    assert all([x.role for x in found[r]] == ["vlm"] for r in readers)
    # A spec string that names no parts reads them all; a catalogue entry of the same parts
    # under another name is the same model.
    same_objects = catalogue["facts-smollm2-objects"].model_copy(update={"name": "objects-again"})
    catalogue = {**catalogue, "objects-again": same_objects}
    assert [r.role for r in mark(["objects-again"], built, catalogue)["objects-again"]] == ["vlm"]
    # The readers are of SmolLM2's family all the same.
    kin = mark(["facts-smollm2"], built, catalogue, {"smollm2": ["smollm2"]})
    assert kin["facts-smollm2"] == [InBuild(role="vlm", family="smollm2", bias="upward")]
    assert kin["facts-smollm2"][0].label() == "vision-language ensemble (same family: smollm2)"
