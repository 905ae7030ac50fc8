"""The dataset card: `README.md` with Hugging Face's YAML front matter (configs, features, licence,
task and size categories) and a body a person reads: what the release measures, its counts, hit
histograms (`hits.png` beside it), how it was built, chance baselines for its exact option counts,
and its known limits. Everything in it comes from the run and the release rows, so the same
decisions give the same card."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from benchfoundry.core.taxonomy import Taxonomy
from benchfoundry.tasks.publish.card_columns import column_lines, evaluate_lines
from benchfoundry.tasks.publish.files import features, letter_columns
from benchfoundry.tasks.publish.rows import ReleaseRow

EMBEDDED_PROVIDERS = {"smollm2", "facts", "blind"}  # offline models shipped in packages
DISCORDANCE = 0.2  # assumed share of questions where one of two models is right, the other not
HISTOGRAM = "hits.png"
DIFFICULTIES = ("tough", "hard", "medium", "easy")


class CardInputs(BaseModel):
    """What the card says of how the release was built (from the run's manifest and tables)."""

    name: str
    pretty_name: str
    description: str
    version: str
    code_version: str
    license: str | None  # the spec's choice; None: from the sources
    sources: list[str]
    extractors: dict[str, int]  # "role: backend model version" -> images
    qc: list[str]  # lines on the filter, consensus and select settings
    review: list[str]  # lines on the review: decisions, agreement
    tiny_models: list[str]  # embedded offline models that judged or wrote questions
    allow_unreviewed: bool
    num_bytes: int
    tsv_differences: int = 0  # questions VLMEvalKit's TSV reader reads otherwise
    languages: dict[str, int] = {}  # twins per language besides English (bilingual releases)
    languages_by_people: dict[str, int] = {}  # of those, the twins a person accepted in review
    results: list[str] = []  # the evaluation's results section (publish.card_results), Markdown


def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


def _yaml_feature(name: str, feature: dict[str, Any]) -> dict[str, Any]:
    if feature.get("_type") == "Image":
        return {"name": name, "dtype": "image"}
    if feature.get("_type") == "Sequence":
        return {"name": name, "sequence": feature["feature"]["dtype"]}
    if "_type" not in feature:  # a struct
        return {"name": name, "struct": [_yaml_feature(k, v) for k, v in feature.items()]}
    return {"name": name, "dtype": feature["dtype"]}


def licence(rows: Sequence[ReleaseRow], chosen: str | None) -> tuple[str, Counter[str]]:
    """The card's licence id, and the licences of the images as the sources give them. One
    licence that reads as an id (`CC0-1.0 (...)` -> `cc0-1.0`) is used; several are `other`."""
    found = Counter(r.license or "unknown" for r in rows)
    if chosen:
        return chosen, found
    ids = {re.split(r"[\s(]", text.strip(), maxsplit=1)[0].lower() for text in found}
    if len(ids) == 1 and "unknown" not in ids:
        return ids.pop(), found
    return "other", found


def front_matter(rows: Sequence[ReleaseRow], inputs: CardInputs, license_id: str) -> dict[str, Any]:
    letters = letter_columns(rows)
    meta: dict[str, Any] = {
        "pretty_name": inputs.pretty_name,
        "license": license_id,
    }
    if license_id == "other":
        meta["license_name"] = "per-image licences (see the card)"
    meta |= {
        "task_categories": ["visual-question-answering", "multiple-choice"],
        "size_categories": [size_category(len(rows))],
        "tags": ["benchmark", "multiple-choice", "vision-language", "benchfoundry"],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*"}]}
        ]
        + [
            {
                "config_name": language,
                "data_files": [{"split": "test", "path": f"data/{language}/test-*"}],
            }
            for language in sorted(inputs.languages)
        ],
        "dataset_info": {
            "features": [_yaml_feature(k, v) for k, v in features(letters).items()],
            "splits": [{"name": "test", "num_bytes": inputs.num_bytes, "num_examples": len(rows)}],
        },
    }
    return meta


def chance(rows: Sequence[ReleaseRow]) -> list[tuple[str, int, float, float]]:
    """(option count, questions, vanilla chance, CircularEval chance) per option count and in
    all: a uniform guess is right 1/n of the time, and on all n rotations (1/n)^n."""
    by_n = Counter(len(r.options) for r in rows)
    out = [(str(n), k, 1 / n, (1 / n) ** n) for n, k in sorted(by_n.items())]
    total = len(rows)
    out.append(
        (
            "all",
            total,
            sum(k / n for n, k in by_n.items()) / total,
            sum(k * (1 / n) ** n for n, k in by_n.items()) / total,
        )
    )
    return out


def detectable_difference(
    n: int, discordance: float = DISCORDANCE, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest accuracy difference between two models a paired test (McNemar, two-sided
    `alpha`) detects with `power` on `n` questions, when the models disagree on a share
    `discordance` of them (Connor 1987: n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2).
    None when even a difference of `discordance` (every disagreement one way) is not."""
    from statistics import NormalDist

    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)

    def needed(d: float) -> float:
        return (z_a * math.sqrt(discordance) + z_b * math.sqrt(discordance - d * d)) ** 2 / d**2

    if n <= 0 or needed(discordance) > n:
        return None
    low, high = 1e-9, discordance  # `needed` falls as d grows
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if needed(mid) > n else (low, mid)
    return high


def power_sentence(n: int) -> str:
    """What difference between two models the release can tell apart (a paired design)."""
    d = detectable_difference(n)
    assumed = (
        f"assuming two models disagree (one right, the other wrong) on {DISCORDANCE:.0%} of the "
        "questions"
    )
    if d is None:
        return (
            f"With {n} questions, a paired comparison of two models (exact McNemar test, "
            f"two-sided 5%) has under 80% power even for a {100 * DISCORDANCE:.0f}-point difference, "
            f"{assumed}: too few questions to rank models."
        )
    return (
        f"With {n} questions, a paired comparison of two models (exact McNemar test, two-sided "
        f"5%) detects a difference in accuracy of {100 * d:.1f} points or more with 80% power, "
        f"{assumed} (Connor's approximation). More disagreement needs a larger difference, and "
        "questions that share an image make it larger still."
    )


def histogram(rows: Sequence[ReleaseRow], path: Path) -> None:
    """Hit counts (text-only models and vision-language models) of the released questions."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3), dpi=100)  # no pyplot: no global figure state
    axes = fig.subplots(1, 2)
    for ax, column, title in (
        (axes[0], "hits_text", "text-only hits (no image)"),
        (axes[1], "hits_vlm", "vision-language hits"),
    ):
        counts = Counter(getattr(r, column) for r in rows if getattr(r, column) is not None)
        xs = list(range(0, max(counts, default=0) + 1))
        ax.bar(xs, [counts.get(x, 0) for x in xs], color="#4c72b0")
        ax.set_title(title)
        ax.set_xlabel("models that answered right")
        ax.set_xticks(xs)
    axes[0].set_ylabel("questions")
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})


def _md(value: object) -> str:
    """Text from the data or the spec, safe in Markdown: no HTML, no links, one line."""
    text = " ".join(str(value).split())
    for raw, safe in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("[", "\\["), ("]", "\\]")):
        text = text.replace(raw, safe)
    return text


def _cell(value: object) -> str:
    """A value from the data, safe in a Markdown table (no column breaks, no markup)."""
    return _md(value).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _twin_review(n: int, by_people: int) -> str:
    if by_people == n:
        return "each accepted (or edited) by a person"
    if by_people == 0:
        return (
            "each accepted by the automatic reviewer only, not by a person (its English item "
            "passed every automatic check; `human_reviewed` is false and `review_state` is `auto`)"
        )
    return (
        f"{by_people} accepted (or edited) by a person, {n - by_people} by the automatic reviewer "
        "only (their English item passed every automatic check; `human_reviewed` is false and "
        "`review_state` is `auto` on those rows)"
    )


def body(
    rows: Sequence[ReleaseRow], inputs: CardInputs, taxonomy: Taxonomy, licences: Counter[str]
) -> list[str]:
    auto = sum(not r.human_reviewed for r in rows)
    images = len({r.image_id for r in rows})
    lines = [f"# {_md(inputs.pretty_name)}", ""]
    if inputs.description:
        lines += [_md(inputs.description), ""]
    lines += [
        f"Version `{inputs.version}`: {len(rows)} multiple-choice questions on {images} images, "
        f"one split (`test`). Built with benchfoundry {inputs.code_version}.",
        "",
    ]
    limits = []
    if auto:
        limits.append(
            f"{auto} of {len(rows)} questions were accepted by the automatic reviewer only (they "
            "passed every automatic check), not by a person: `human_reviewed` is false and "
            "`review_state` is `auto` on those rows."
        )
    if inputs.tiny_models:
        limits.append(
            "Questions were checked (and some written) by small offline models shipped in "
            f"packages ({', '.join(inputs.tiny_models)}): their hit counts and difficulty bins "
            "say little about what strong models find hard."
        )
    if inputs.tsv_differences:
        limits.append(
            f"In `{inputs.name}.tsv`, {inputs.tsv_differences} questions have an option that "
            "VLMEvalKit's reader (pandas) takes for missing (`None`, `NA`...) or turns into a "
            "number (`3` as `3.0`); the Parquet files have them as written. The manifest lists "
            "their ids (`tsv_differences`)."
        )
    if limits:
        lines += ["## Known limits", "", *(f"- {x}" for x in limits), ""]
    by_dim = Counter(r.dimension for r in rows)
    difficulty = Counter((r.dimension, r.difficulty) for r in rows)
    lines += [
        "## What it measures",
        "",
        f"Dimensions of the `{taxonomy.name}` taxonomy (version {taxonomy.version})"
        + (f": {_md(taxonomy.description)}" if taxonomy.description else "."),
        "Each question has one correct option; `answer` is its letter.",
        "",
        *_table(
            ["dimension", "category", "questions", *DIFFICULTIES, "no bin"],
            [
                [
                    d,
                    next(r.l2_category for r in rows if r.dimension == d),
                    n,
                    *(difficulty[(d, b)] for b in DIFFICULTIES),
                    difficulty[(d, None)],
                ]
                for d, n in sorted(by_dim.items())
            ],
        ),
        "",
        "## Hit counts",
        "",
        f"![hit counts]({HISTOGRAM})",
        "",
        "`hits_text`: how many text-only models (and blind baselines) answered right without the "
        "image; `hits_vlm`: how many vision-language models answered right with it, under "
        "CircularEval. Low counts mean hard questions; the quality-control rules below say which "
        "counts were dropped or flagged.",
        "",
        "## Chance baselines",
        "",
        "A uniform guess, per option count. Under CircularEval a question counts as right only "
        "when every rotation of its options is answered right.",
        "",
        *_table(
            ["options", "questions", "vanilla", "CircularEval"],
            [[n, k, f"{v:.2%}", f"{c:.2%}"] for n, k, v, c in chance(rows)],
        ),
        "",
        "## Telling models apart",
        "",
        power_sentence(len(rows)),
        "",
        "## How it was built",
        "",
        "Sources:",
        "",
        *(f"- {_md(s)}" for s in inputs.sources or ["(not recorded)"]),
        "",
        "Image licences (as the sources give them):",
        "",
        *_table(["licence", "questions"], sorted(licences.items())),
        "",
        "Visual facts:",
        "",
        *(f"- {_md(k)} ({v} images)" for k, v in sorted(inputs.extractors.items())),
        "",
        "Questions, by generator and prompt (id and hash of the template that asked):",
        "",
        *_table(
            ["generator", "prompt", "prompt hash", "questions"],
            [
                [g, p or "-", h or "-", n]
                for (g, p, h), n in sorted(
                    Counter((r.generator, r.prompt_id, r.prompt_hash) for r in rows).items(),
                    key=str,
                )
            ],
        ),
        "",
        "Quality control:",
        "",
        *(f"- {_md(x)}" for x in inputs.qc or ["(not recorded)"]),
        "",
        "Review:",
        "",
        *(f"- {_md(x)}" for x in inputs.review),
        "",
        *inputs.results,
        "## Files",
        "",
        "- `data/test-*.parquet`: the questions with their images (a `datasets.Image()` column)",
        *(
            f"- `data/{language}/test-*.parquet`: the {n} twins in `{language}` (config "
            f"`{language}`): the same `question_id`, image and key as their English items, "
            "written by benchfoundry's translate stage, checked (option count, key, numbers, "
            "nothing left untranslated) and reviewed as items of their own: "
            + _twin_review(n, inputs.languages_by_people.get(language, 0))
            for language, n in sorted(inputs.languages.items())
        ),
        (
            f"- `{inputs.name}_EN.tsv`, `{inputs.name}_CN.tsv`: VLMEvalKit's MCQ layout, one file "
            "per language as its bilingual sets have (copy them into `$LMUData` and run each as a "
            "custom MCQ dataset)"
            if inputs.languages
            else f"- `{inputs.name}.tsv`: VLMEvalKit's MCQ layout (copy it into `$LMUData` and "
            "run it as a custom MCQ dataset)"
        ),
        *clip_files(rows, inputs),
        "- `manifest.json`: the version, each file's hash, the build spec and its hash",
        "",
        *column_lines(letter_columns(rows)),
        *evaluate_lines(inputs.name, sorted(inputs.languages)),
    ]
    return lines


def clip_files(rows: Sequence[ReleaseRow], inputs: CardInputs) -> list[str]:
    """What a release's clip questions carry, file by file and column by column (none without
    clip questions)."""
    clips = [r for r in rows if r.clip_id]
    if not clips:
        return []
    files = len({r.video for r in clips if r.video})
    tsv = (
        f"`{inputs.name}_EN.tsv` (and each language's)"
        if inputs.languages
        else f"`{inputs.name}.tsv`"
    )
    return [
        f"- `videos/<sha256>.mp4` ({files} files): for each of the {len(clips)} questions on a "
        "video, the stretch of its source clip that the question may show, cut into a file of its "
        "own (H.264, re-encoded so the cut is exact to the frame) and named by the sha256 of its "
        "bytes; questions on the same stretch share one. An action prediction's file holds the "
        "steps shown and ends where they end, before the step it asks about; an action "
        "recognition's holds its action; a procedure's its key actions. Nothing after the "
        "stretch is in the release.",
        "- `frames/<image id>.png`: the keyframes sampled from those stretches (N uniformly "
        "spaced frames per annotated step, all inside the stretch), named by their sha256.",
        "- Columns of a question on a video: `video` names its file (`videos/...`); "
        "`video_start` is 0 and `video_end` the file's duration in seconds, so the whole file is "
        "the stretch to show; `video_frames` lists its keyframes (`frames/...`) in time order; "
        "`image` is one of them; `clip_id` (the source clip's sha256), `clip_start` and "
        "`clip_end` say where the stretch lies in the source clip, and `meta_info.video_source` "
        "names that clip in its source. All are null (or empty) for a question on an image.",
        f"- In {tsv} a question on a video has its keyframes as `image` (a list of base64 "
        "PNGs, VLMEvalKit's multi-image form, with `image_path` naming each), so an image model "
        "run by VLMEvalKit sees frames of the stretch; `video`, `video_start` and `video_end` are "
        "as in the Parquet files.",
    ]


def write_card(
    rows: Sequence[ReleaseRow], inputs: CardInputs, taxonomy: Taxonomy, folder: Path
) -> None:
    license_id, licences = licence(rows, inputs.license)
    meta = yaml.safe_dump(
        front_matter(rows, inputs, license_id), sort_keys=False, allow_unicode=True
    )
    text = "---\n" + meta + "---\n\n" + "\n".join(body(rows, inputs, taxonomy, licences)) + "\n"
    (folder / "README.md").write_text(text, encoding="utf-8")
    histogram(rows, folder / HISTOGRAM)
