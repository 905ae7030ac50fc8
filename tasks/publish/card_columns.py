"""The card's reference sections: what every column of the release's data files holds, and how to
evaluate the release with the tools a researcher reaches for (VLMEvalKit, lmms-eval, `datasets`
with one's own loop, benchfoundry), a runnable line each. The columns are listed from the data
files' own schema (`files.columns`), so a column added there without a description here fails
the card's test, not a user."""

from __future__ import annotations

from collections.abc import Sequence

from benchfoundry.core.letters import LETTERS
from benchfoundry.tasks.publish.files import META_FIELDS, columns, tsv_name
from benchfoundry.tasks.publish.lmms_eval_tasks import task_names

DESCRIBED = {
    "index": "the question's number in the release, from 0; a twin in another language keeps "
    "its English item's (the files pair by it, as MMBench's EN and CN files do)",
    "question": "the question, as a person reads it",
    "image": "the image the question is asked about (a `datasets.Image()`: bytes and a file "
    "name); for a question on a video, one of its keyframes",
    "answer": "the letter of the one correct option (A, B, ...)",
    "category": "the dimension's top level (MMStar's `category`)",
    "l2_category": "the dimension's second level (MMStar's `l2_category`), or the dimension "
    "itself in a flat taxonomy",
    "meta_info": "provenance, one struct: " + ", ".join(f"`{f}`" for f in META_FIELDS),
    "options": "the options in order, as a list (the letter columns hold the same)",
    "letters": "each option under its letter (MMBench's layout); empty past the question's "
    "last option",
    "hint": "context shown before the question, or empty",
    "dimension": "the taxonomy dimension's path of ids, root first, joined with `/`",
    "hits_text": "how many text-only models and blind baselines answered right without the "
    "image (MMStar's hit count; low means the image is needed)",
    "hits_vlm": "how many vision-language models answered right with the image, under "
    "CircularEval (low means hard)",
    "difficulty": "the bin `hits_vlm` falls in, as a share of the ensemble: `tough` (at most a "
    "quarter right), `hard` (half), `medium` (three quarters), `easy`; empty when not measured",
    "source": "where the question came from: a generator and template, or a seed file's row",
    "image_id": "sha256 of the image's bytes",
    "question_id": "the question's content id (image, question, options); a twin shares its "
    "English item's",
    "reviewers": "whose decision released it (`auto`: the automatic reviewer)",
    "review_decision": "`accept`, `fix_answer`, `edit` or `move`",
    "review_state": "`decided` (one person decided), `agreed` (two or more people made the "
    "same decision), `adjudicated` (an adjudicator settled a disagreement) or `auto` (no "
    "person; the automatic reviewer, after every automatic check passed)",
    "human_reviewed": "whether a person accepted it (false where `review_state` is `auto`)",
    "review_changes": "what review changed: `answer`, `question`, `options`, `dimension`",
    "video": "a question on a video: its file, `videos/<sha256>.mp4`, holding only the stretch "
    "the question may show; null for a question on an image",
    "video_start": "0 for a question on a video: the file is the whole stretch to show",
    "video_end": "the video file's duration in seconds",
    "video_frames": "the stretch's keyframes in time order, `frames/<image id>.png`",
    "clip_id": "sha256 of the source clip the stretch was cut from",
    "clip_start": "where the stretch starts in the source clip, in seconds",
    "clip_end": "where it ends (an action prediction's ends before the step it asks about)",
    "language": "the text's language (`en`, `zh`...); a twin has its English item's image, "
    "key and `question_id`",
}


def column_lines(letters: str) -> list[str]:
    """The `## Columns` section: every column of the data files, in their order."""
    lines = ["## Columns", "", "| column | type | holds |", "|---|---|---|"]
    shown_letters = False
    for name, kind, _ in columns(letters):
        if name in LETTERS:
            if shown_letters:
                continue
            shown_letters = True
            name, text = f"{letters[0]}..{letters[-1]}", DESCRIBED["letters"]
        else:
            text = DESCRIBED[name]
        lines.append(f"| `{name}` | `{kind}` | {text} |")
    return [*lines, ""]


def evaluate_lines(name: str, languages: Sequence[str]) -> list[str]:
    """The `## Evaluate it` section: a runnable line per tool, from the release's folder."""
    tsvs = [tsv_name(name, lang, bool(languages)) for lang in ["en", *languages]]
    data = tsvs[0].removesuffix(".tsv")
    tasks = [t for lang in ["en", *languages] for t in task_names(name, lang)]
    return [
        "## Evaluate it",
        "",
        "With benchfoundry (CircularEval, intervals, paired comparisons, each language its own "
        "board; any OpenAI-compatible server):",
        "",
        "```bash",
        f"benchfoundry evaluate --dataset . --out ~/evaluations/{name}-MODEL "
        "--model openai/MODEL@http://127.0.0.1:8000/v1",
        "```",
        "",
        "With VLMEvalKit, as a custom multiple-choice dataset: copy the TSV into `$LMUData` "
        "(default `~/LMUData`) and name it by its file name"
        + (f" (the other language: `{tsvs[1]}`)" if len(tsvs) > 1 else "")
        + ":",
        "",
        "```bash",
        f'cp {tsvs[0]} "${{LMUData:-$HOME/LMUData}}/" && python run.py --data {data} '
        "--model MODEL_NAME",
        "```",
        "",
        "With lmms-eval, offline from this folder's own files: `lmms_eval/` holds a task per "
        "language that asks each question once (`accuracy`) and one that asks it once per "
        "rotation of its options (`_circular`: `circular_accuracy`, MMBench's CircularEval, a "
        "question right only when every pass is; and first-pass `accuracy`); `unparsed` counts "
        "replies that named no single option, scored wrong. Tested with lmms-eval 0.7.3, which "
        "needs `filelock<4` (with filelock 4 it logs an error and evaluates nothing); any "
        "OpenAI-compatible server, `api_key` whatever it accepts:",
        "",
        "```bash",
        'pip install lmms-eval==0.7.3 "filelock<4"',
        "python -m lmms_eval --model openai_compatible --model_args "
        "model_version=MODEL,base_url=http://127.0.0.1:8000/v1,api_key=EMPTY "
        f"--include_path lmms_eval --tasks {','.join(tasks)}",
        "```",
        "",
        "With Hugging Face `datasets` and a loop of your own:",
        "",
        "```python",
        "from datasets import load_dataset",
        'ds = load_dataset("parquet", data_files="data/test-*.parquet", split="train")',
        *(
            f'{lang} = load_dataset("parquet", data_files="data/{lang}/test-*.parquet", '
            'split="train")  # pairs with ds by index and question_id'
            for lang in languages
        ),
        "```",
        "",
    ]
