"""The release's lmms-eval task folder, `lmms_eval/`: per language, a task that asks each question
once (`<name>_en`, `<name>_zh`...: accuracy) and one that asks it once per rotation of its
options (`<name>_en_circular`...: CircularEval and first-pass accuracy), with the functions they
share (`lmms_eval_utils.py`, copied as `utils.py`). lmms-eval runs them offline from the
release's own Parquet files, wherever the release folder is moved:

    python -m lmms_eval --model openai_compatible \
        --model_args model_version=MODEL,base_url=URL,api_key=KEY \
        --include_path RELEASE/lmms_eval --tasks <name>_en

Each YAML names its data files relative to itself (`../data/...`); lmms-eval (0.7.3) anchors a
`parquet` dataset's relative `data_files` at the YAML's folder, and `utils.py` finds the keyframes
of clip questions from its own place in the release."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

FOLDER = "lmms_eval"
UTILS = Path(__file__).with_name("lmms_eval_utils.py")
GENERATION = {"max_new_tokens": 64, "temperature": 0}  # as evaluate asks (GenerateParams)


def task_names(name: str, language: str) -> tuple[str, str]:
    """A language's two tasks: asked once, and under CircularEval."""
    return f"{name}_{language}", f"{name}_{language}_circular"


def _yaml(task: str, files: list[str], version: str, circular: bool) -> str:
    """One task's YAML (written as text: lmms-eval's `!function` tags are not plain YAML; every
    string is a JSON string, which YAML reads as the same string)."""
    q = json.dumps
    metrics = (
        ["accuracy", "circular_accuracy", "unparsed"] if circular else ["accuracy", "unparsed"]
    )
    lines = [
        "# Written by benchfoundry publish: see the release's README.md, 'Evaluate it'.",
        f"task: {q(task)}",
        "dataset_path: parquet",
        "dataset_kwargs:",
        "  data_files:",
        "    test:",
        *(f"      - {q(f)}" for f in files),
        "test_split: test",
        "output_type: generate_until",
        *(["process_docs: !function utils.circular_docs"] if circular else []),
        "doc_to_visual: !function utils.doc_to_visual",
        "doc_to_text: !function utils.doc_to_text",
        "doc_to_target: !function utils.doc_to_target",
        "process_results: !function utils.process_results",
        "cluster_key: image_id",  # questions share images: the clustered stderr is by image
        "generation_kwargs:",
        *(f"  {k}: {v}" for k, v in GENERATION.items()),
        "metric_list:",
    ]
    for metric in metrics:
        lines += [
            f"  - metric: {metric}",
            f"    aggregation: !function utils.{metric}",
            f"    higher_is_better: {'false' if metric == 'unparsed' else 'true'}",
        ]
    return "\n".join([*lines, "metadata:", f"  version: {q(version)}", ""])


def write_lmms_eval_tasks(release: Path, name: str, version: str, languages: Sequence[str]) -> None:
    """`release/lmms_eval/`: the YAMLs of English and each other language (data in
    `data/test-*.parquet` and `data/<language>/test-*.parquet`) and `utils.py`."""
    folder = release / FOLDER
    folder.mkdir()
    shutil.copyfile(UTILS, folder / "utils.py")
    for language in ["en", *languages]:
        data = release / "data" if language == "en" else release / "data" / language
        files = [f"../{p.relative_to(release).as_posix()}" for p in sorted(data.glob("*.parquet"))]
        for task, circular in zip(task_names(name, language), (False, True), strict=True):
            text = _yaml(task, files, version, circular)
            (folder / f"{task}.yaml").write_text(text, encoding="utf-8")
