"""The publish stage: what review accepted, as decided, becomes a release that Hugging Face
`datasets` and pandas load and whose TSV follows VLMEvalKit's conventions; versions are content
hashes, never rewritten, and a publish killed half way leaves no visible release."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from benchfoundry.core.records import (
    CandidateRecord,
    ReviewRecord,
    ScoredRecord,
)
from benchfoundry.decisions.reviews import AUTO, Decision, candidate_hash, now, record
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.storage import releases
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.options import PublishOptions
from benchfoundry.tasks.publish.stage import PublishError

DIMENSIONS = (
    "instances_counting",
    "instance_attributes",
    "instance_location",
    "scene_understanding",
)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _options(tmp_path, **fields) -> PublishOptions:
    return PublishOptions(to=tmp_path / "releases", **fields)


def publish(run: RunFolder, options: PublishOptions, name: str = "bench"):
    stage = StageRun.make(run, publish=options)
    stage.name = name
    return STAGES["publish"].run(stage)


@pytest.fixture
def make_run(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record):
    return lambda people=True: _make_run(
        tmp_path, image_bytes, store_raw_image, candidate_record, scored_record, people
    )


@pytest.fixture
def run(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record) -> RunFolder:
    # self-contained: other test modules import this fixture alone
    return _make_run(tmp_path, image_bytes, store_raw_image, candidate_record, scored_record, True)


def _make_run(
    tmp_path, image_bytes, store_raw_image, candidate_record, scored_record, people
) -> RunFolder:
    """12 candidates on 6 images (two per image) in four dimensions, answers spread over A..D;
    a person decided q00..q09 (q03's answer fixed, q05 moved, q06 edited, q07 rejected), the
    automatic reviewer accepted q10, nobody decided q11."""
    run = RunFolder(tmp_path / "run")
    images = [store_raw_image(run, image_bytes(seed=i)) for i in range(6)]
    candidates, scored = [], []
    for i in range(12):
        qid, dim = f"q{i:02d}", DIMENSIONS[i % 4]
        options = [f"option {i}-{j}" for j in range(4)]
        candidates.append(
            candidate_record(
                qid,
                images[i // 2],
                dimension=dim,
                options=options,
                answer="ABCD"[i % 4],
                hint="Look at the left." if i == 2 else None,
            )
        )
        scored.append(
            scored_record(qid, images[i // 2], dimension=dim, answer="ABCD"[i % 4], hits_text=i % 3)
        )
    run.table(CandidateRecord).append(candidates)
    run.table(ScoredRecord).append(scored)
    decisions = [Decision(f"q{i:02d}", "ann", "accept") for i in (0, 1, 2, 4, 8, 9)]
    decisions += [
        Decision("q03", "ann", "fix_answer", new_answer="A"),
        Decision("q05", "ann", "move", new_dimension="spatial_relation"),
        Decision("q06", "ann", "edit", new_question="Which option is shown?"),
        Decision("q07", "ann", "reject", reason="two answers fit"),
    ]
    if people:
        added, _, refused = record(run, decisions, tool="app")
        assert added == 10 and not refused
    c10 = next(c for c in candidates if c.question_id == "q10")
    ReviewStore.open(run).add(
        [
            ReviewRecord(
                question_id="q10",
                reviewer=AUTO,
                decision="accept",
                tool="auto",
                candidate_hash=candidate_hash(c10),
                decided_at=now(),
            )
        ]
    )
    return run


def _offline_datasets():
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets

    return datasets


def test_release_loads_with_datasets_and_pandas(run, tmp_path):
    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    assert summary.written and summary.rows == 9 and summary.gate.success
    assert summary.left_out == {
        "accepted by the automatic reviewer only (publish needs allow_unreviewed)": 1,
        "not sent to review (quality control: selected)": 1,
        "rejected": 1,
    }
    folder = tmp_path / "releases" / "bench" / summary.version
    assert releases.read_latest(folder.parent) == summary.version
    datasets = _offline_datasets()
    ds = datasets.load_dataset(
        "parquet", data_files=str(folder / "data" / "*.parquet"), split="train",
        cache_dir=str(tmp_path / "hf"),
    )  # fmt: skip
    assert isinstance(ds.features["image"], datasets.Image)
    rows = {r["question_id"]: r for r in ds}
    assert sorted(rows) == ["q00", "q01", "q02", "q03", "q04", "q05", "q06", "q08", "q09"]
    assert isinstance(rows["q00"]["image"], Image.Image) and rows["q00"]["image"].size == (96, 72)
    assert rows["q03"]["answer"] == "A" and rows["q03"]["review_changes"] == ["answer"]
    assert rows["q05"]["dimension"] == "spatial_relation"
    assert rows["q05"]["l2_category"] == "Spatial Relation"
    assert rows["q06"]["question"] == "Which option is shown?"
    assert rows["q01"]["answer"] == "B" and rows["q01"]["B"] == "option 1-1"
    assert rows["q01"]["options"] == [f"option 1-{j}" for j in range(4)]
    assert rows["q02"]["hint"] == "Look at the left."
    assert all(r["human_reviewed"] and r["reviewers"] == ["ann"] for r in rows.values())
    assert rows["q00"]["meta_info"]["split"] == "test" and rows["q00"]["hits_text"] == 0
    assert sorted(r["index"] for r in rows.values()) == list(range(9))
    # the folder itself loads through the card's configs, as the Hub would
    by_card = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf2"))
    assert list(by_card) == ["test"] and by_card["test"].num_rows == 9
    import pandas as pd

    frame = pd.read_parquet(folder / "data")
    assert len(frame) == 9 and frame["index"].dtype == "int64"
    assert set(frame.columns) >= {
        "index", "question", "image", "answer", "category", "l2_category", "meta_info",
        "options", "A", "B", "C", "D", "hint", "dimension", "hits_text", "hits_vlm",
        "difficulty", "source", "image_id", "question_id", "reviewers", "review_decision",
        "human_reviewed",
    }  # fmt: skip


def test_card_front_matter_and_body(run, tmp_path):
    summary = publish(run, _options(tmp_path, letter_tolerance=0.5, allow_unreviewed=True))
    folder = tmp_path / "releases" / "bench" / summary.version
    text = (folder / "README.md").read_text(encoding="utf-8")
    head, body = text.split("---\n", 2)[1:]
    meta = yaml.safe_load(head)
    assert meta["configs"][0]["data_files"] == [{"split": "test", "path": "data/test-*"}]
    features = {f["name"]: f for f in meta["dataset_info"]["features"]}
    assert features["image"] == {"name": "image", "dtype": "image"}
    assert meta["size_categories"] == ["n<1K"] and "license" in meta
    assert meta["dataset_info"]["splits"][0]["num_examples"] == summary.rows == 10
    assert "1 of 10 questions were accepted by the automatic reviewer only" in body
    assert "| 4 | 10 | 25.00% | 0.39% |" in body  # chance under vanilla and CircularEval
    assert "![hit counts](hits.png)" in body
    Image.open(folder / "hits.png").verify()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["version"] == summary.version and manifest["rows"] == 10
    assert {f for f in manifest["files"] if not f.startswith("explore/")} == {
        "README.md", "hits.png", "bench.tsv", "data/test-00000-of-00001.parquet",
        "lmms_eval/utils.py", "lmms_eval/bench_en.yaml", "lmms_eval/bench_en_circular.yaml",
    }  # fmt: skip
    assert {"explore/index.html", "explore/data/meta.js"} <= set(manifest["files"])
    for name, entry in manifest["files"].items():
        assert releases.file_sha256(folder / name) == entry["sha256"]
    assert manifest["code_version"] and "spec_hash" in manifest
    auto = pq.read_table(folder / "data", columns=["question_id", "human_reviewed", "review_state"])
    assert {r["question_id"]: r["review_state"] for r in auto.to_pylist()}["q10"] == "auto"


def _vlmevalkit_images(frame) -> dict[str, str]:
    """VLMEvalKit's own rule: indexes as text, an `image` of 64 characters or fewer names the
    index of the row that carries the image."""
    frame["index"] = [str(x) for x in frame["index"]]
    image_map = {k: str(v) for k, v in zip(frame["index"], frame["image"], strict=True)}
    for k in image_map:
        if len(image_map[k]) <= 64:
            ref = image_map[k]
            assert ref in image_map and len(image_map[ref]) > 64
            image_map[k] = image_map[ref]
    return image_map


def test_tsv_follows_vlmevalkit_conventions(run, tmp_path):
    import pandas as pd

    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    tsv = tmp_path / "releases" / "bench" / summary.version / "bench.tsv"
    frame = pd.read_csv(tsv, sep="\t")
    assert list(frame.columns) == [
        "index", "question_id", "image", "question", "hint", "A", "B", "C", "D", "answer",
        "category", "l2-category", "split",
    ]  # fmt: skip
    assert frame["index"].dtype == "int64" and len(frame) == 9
    parquet = pd.read_parquet(tsv.parent / "data").set_index("index")
    shared = frame[frame["image"].astype(str).str.len() <= 64]
    assert len(shared) == 4, "q01, q03, q05 and q09 show the image of the row before them"
    for _, row in shared.iterrows():
        first = frame[frame["index"] == int(row["image"])].iloc[0]
        assert parquet.loc[first["index"], "image_id"] == parquet.loc[row["index"], "image_id"]
        assert first["index"] < row["index"]
    images = _vlmevalkit_images(frame.copy())
    for index, b64 in images.items():
        decoded = Image.open(io.BytesIO(base64.b64decode(b64)))
        assert decoded.size == (96, 72)
        assert base64.b64decode(b64) == parquet.loc[int(index), "image"]["bytes"]
    for _, row in frame.iterrows():
        options = parquet.loc[row["index"], "options"]
        assert [row[x] for x in "ABCD"[: len(options)]] == list(options)
        assert row["answer"] in "ABCD"[: len(options)]
        assert row["answer"] == parquet.loc[row["index"], "answer"]
    hints = dict(zip(frame["index"], frame["hint"], strict=True))
    assert sum(pd.isna(h) for h in hints.values()) == 8, "no hint reads as missing (NaN)"


def test_same_decisions_write_nothing_and_new_ones_make_a_child(run, tmp_path):
    options = _options(tmp_path, letter_tolerance=0.5)
    first = publish(run, options)
    folder = tmp_path / "releases" / "bench" / first.version
    stamps = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    again = publish(run, options)
    assert again.version == first.version and not again.written
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == stamps
    record(run, [Decision("q07", "bo", "accept"), Decision("q11", "ann", "accept")], tool="app")
    record(run, [Decision("q00", "ann", "reject", reason="blurred")], tool="app")
    record(run, [Decision("q01", "ann", "fix_answer", new_answer="C")], tool="app")
    child = publish(run, options)
    assert child.written and child.version != first.version and child.parent == first.version
    assert child.changes == {"added": 1, "removed": 1, "changed": 1}  # q11; q00; q01
    manifest = releases.read_manifest(tmp_path / "releases" / "bench" / child.version)
    assert manifest["changes"] == {"added": ["q11"], "removed": ["q00"], "changed": ["q01"]}
    assert releases.read_latest(folder.parent) == child.version
    listed = releases.list_releases(tmp_path / "releases")
    assert [(r.version, r.latest) for r in listed] == [
        (first.version, False),
        (child.version, True),
    ]
    # q07 stays out: ann rejected it, bo accepted it; that is a conflict until adjudicated
    assert child.left_out["reviewers disagree (not adjudicated)"] == 1


def test_a_published_version_is_never_rewritten(run, tmp_path):
    options = _options(tmp_path, letter_tolerance=0.5)
    first = publish(run, options)
    card = tmp_path / "releases" / "bench" / first.version / "README.md"
    card.write_text("changed by hand\n", encoding="utf-8")
    with pytest.raises(PublishError, match="already exists .* other content .*README.md differs"):
        publish(run, options)
    assert card.read_text(encoding="utf-8") == "changed by hand\n"


def test_without_people_nothing_is_published_unless_allowed(make_run, tmp_path):
    run = make_run(people=False)
    with pytest.raises(PublishError, match="nothing to publish.*automatic reviewer only"):
        publish(run, _options(tmp_path))
    assert not (tmp_path / "releases" / "bench").exists()
    summary = publish(run, _options(tmp_path, allow_unreviewed=True, letter_tolerance=1))
    assert summary.rows == 1 and summary.auto_only == 1 and "human_decision" in summary.gate.skipped


def test_shards_and_row_groups(run, tmp_path):
    summary = publish(
        run, _options(tmp_path, letter_tolerance=0.5, rows_per_file=4, row_group_rows=2)
    )
    data = tmp_path / "releases" / "bench" / summary.version / "data"
    names = sorted(p.name for p in data.iterdir())
    assert names == [f"test-0000{i}-of-00003.parquet" for i in range(3)]
    groups = [pq.ParquetFile(data / n).metadata.num_row_groups for n in names]
    assert groups == [2, 2, 1]


def test_a_publish_killed_after_its_data_files_leaves_no_release(run, tmp_path):
    options = _options(tmp_path, letter_tolerance=0.5)
    first = publish(run, options)
    record(run, [Decision("q11", "ann", "accept")], tool="app")
    script = (
        "import sys; from pathlib import Path\n"
        "from benchfoundry.tasks.publish.options import PublishOptions\n"
        "from benchfoundry.pipeline.registry import STAGES, StageRun\n"
        "stage = StageRun.make(sys.argv[1], publish=PublishOptions(to=Path(sys.argv[2]), letter_tolerance=0.5))\n"
        "stage.name = 'bench'\n"
        "STAGES['publish'].run(stage)\n"
    )
    env = {**os.environ, "BENCHFOUNDRY_CRASH_AT": "publish.after_data"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(run.root), str(tmp_path / "releases")],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    folder = tmp_path / "releases" / "bench"
    hidden = [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    assert hidden and list((hidden[0] / "data").glob("*.parquet")), "it died after its data"
    assert [p.name for p in releases.versions(folder)] == [first.version]
    assert releases.read_latest(folder) == first.version
    assert [r.version for r in releases.list_releases(tmp_path / "releases")] == [first.version]
    child = publish(run, options)  # the next publish clears what the dead one left
    assert child.written and child.parent == first.version
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    # killed after the rename, before `latest` moved: the next publish of it repairs `latest`
    record(run, [Decision("q07", "ann", "accept")], tool="app")
    env["BENCHFOUNDRY_CRASH_AT"] = "publish.before_latest"
    done = subprocess.run(
        [sys.executable, "-c", script, str(run.root), str(tmp_path / "releases")],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert len(releases.versions(folder)) == 3 and releases.read_latest(folder) == child.version
    third = publish(run, options)
    assert not third.written and releases.read_latest(folder) == third.version != child.version
    assert publish(run, options).latest == third.version


def test_a_failing_gate_stops_the_release_and_names_the_rows(run, tmp_path):
    # a reviewer's edit writes q04's answer (A, 'option 4-0') into its question
    record(run, [Decision("q04", "bo", "edit", new_question="Is it option 4-0?")], tool="app")
    record(run, [Decision("q04", "ann", "edit", new_question="Is it option 4-0?")], tool="app")
    with pytest.raises(PublishError, match=r"answer_not_in_question .*1 row: q04"):
        publish(run, _options(tmp_path, letter_tolerance=0.5))
    folder = tmp_path / "releases" / "bench"
    assert not releases.versions(folder) and releases.read_latest(folder) is None
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    docs = run.root / "reports" / "data_docs" / "index.html"
    assert docs.is_file()


def test_publish_and_releases_commands(run, tmp_path, prefect_api):
    from typer.testing import CliRunner

    from benchfoundry.cli import app

    runner = CliRunner()
    to = tmp_path / "out"
    refused = runner.invoke(app, ["publish", "--out", str(run.root)])
    assert refused.exit_code == 1 and "give --to DIR" in refused.output
    failed = runner.invoke(app, ["publish", "--out", str(run.root), "--to", str(to)])
    # the default letter tolerance refuses this small run's answers (four As in nine)
    assert failed.exit_code == 1 and "the publish gate refused the release" in failed.output
    assert "letter_balance[A]" in failed.output and "Data Docs:" in failed.output
    spec = tmp_path / "bench.yaml"
    spec.write_text(
        "name: bench\nsources: [{kind: packaged}]\n"
        "options: {publish: {to: out, letter_tolerance: 0.5}}\n",
        encoding="utf-8",
    )
    args = ["publish", "--out", str(run.root), "--spec", str(spec), "--allow-unreviewed"]
    done = runner.invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["rows"] == 10 and summary["auto_only"] == 1 and summary["written"]
    assert summary["release"] == str(to / "bench" / summary["version"])
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "already published (nothing written)" in again.output
    # without --spec, the build manifest's spec says where (its JSON is not always a spec again)
    built = {"name": "bench", "options": {"publish": {"to": str(tmp_path / "other")}}}
    built["options"]["consensus"] = {"bins": {"easy": 1.0, "hard": 0.5}}  # keys sorted
    run.update_manifest("build", {"spec": built})
    by_manifest = runner.invoke(app, ["publish", "--out", str(run.root), "--json"])
    assert by_manifest.exit_code == 1 and "letter_balance[A]" in by_manifest.output
    built["options"]["publish"]["letter_tolerance"] = 0.5
    run.update_manifest("build", {"spec": built})
    by_manifest = runner.invoke(app, ["publish", "--out", str(run.root), "--json"])
    assert by_manifest.exit_code == 0, by_manifest.output
    assert json.loads(by_manifest.stdout)["release"].startswith(str(tmp_path / "other" / "bench"))
    listing = runner.invoke(app, ["releases", "--to", str(to)])
    assert listing.exit_code == 0
    assert f"bench {summary['version']}  (latest)" in listing.output
    assert "10 questions (9 decided by a person, 1 automatic only)" in listing.output
    assert "parent none: added 10, removed 0, changed 0" in listing.output


def test_tsv_text_that_pandas_reads_otherwise_is_reported(run, tmp_path, candidate_record):
    image = run.table(CandidateRecord).records()[0].image_id
    odd = candidate_record(
        "q20", image, dimension="instances_counting", question="How many?\r\nCount them.",
        options=["None", "3"], answer="B",
    )  # fmt: skip
    run.table(CandidateRecord).append([odd])
    record(run, [Decision("q20", "ann", "accept")], tool="app")
    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    assert summary.tsv_differences == ["q20"], "'None' reads as missing in VLMEvalKit's reader"
    folder = tmp_path / "releases" / "bench" / summary.version
    import pandas as pd

    frame = pd.read_csv(folder / "bench.tsv", sep="\t")
    assert len(frame) == summary.rows == 10, "a carriage return does not split a row"
    row = frame[frame["index"] == next(i for i, q in _ids(folder) if q == "q20")].iloc[0]
    assert row["question"] == "How many?\nCount them." and row["B"] == "3" and pd.isna(row["C"])
    assert (
        "1 questions have an option that VLMEvalKit's reader" in (folder / "README.md").read_text()
    )
    assert releases.read_manifest(folder)["tsv_differences"] == ["q20"]


def _ids(folder):
    table = pq.read_table(folder / "data", columns=["index", "question_id"]).to_pylist()
    return [(r["index"], r["question_id"]) for r in table]


def test_release_paths_keep_no_local_folders():
    from benchfoundry.tasks.publish.rows import short_path

    roots = [Path("/home/me/photos"), Path("/data/bench")]
    assert short_path("/home/me/photos/cats/a.jpg", roots) == "photos/cats/a.jpg"
    assert short_path("/data/bench/q.tsv#index=3", roots) == "bench/q.tsv#index=3"
    assert short_path("/home/alice/x.jpg") == "alice/x.jpg"
    assert short_path("image:abc#counting", roots) == "image:abc#counting"


def test_the_card_explains_every_column_and_how_to_evaluate(run, tmp_path):
    """Every column of the data files has a row in the card's column table (listed from the
    files' own schema), and the card gives a runnable line for each tool."""
    summary = publish(run, _options(tmp_path, letter_tolerance=0.5))
    folder = tmp_path / "releases" / "bench" / summary.version
    card = (folder / "README.md").read_text(encoding="utf-8")
    table = card.split("## Columns", 1)[1].split("\n## ", 1)[0]
    names = pq.read_schema(next((folder / "data").glob("test-*.parquet"))).names
    for name in names:
        shown = "A..D" if name in "ABCD" else name
        assert f"| `{shown}` |" in table, name
    how = card.split("## Evaluate it", 1)[1]
    assert "benchfoundry evaluate --dataset . --out ~/evaluations/bench-MODEL" in how
    assert "cp bench.tsv" in how and "python run.py --data bench" in how
    assert 'load_dataset("parquet"' in how
    assert "--include_path lmms_eval --tasks bench_en,bench_en_circular\n" in how
