"""Typed records for every table of a run, and the Arrow schemas derived from them.

One record class per table (see DESIGN.md, "Data flows as tables"). The Arrow schema of a table
is derived from its record's annotations (`record_base.py`), so the two can never disagree.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from benchfoundry.core.record_base import (  # noqa: F401  arrow_schema: read from here too
    Nested,
    Record,
    arrow_schema,
)

# --- images and quarantine (ingest) -------------------------------------------------------------


class ImageRecord(Record):
    """One stored image. `image_id` is the sha256 of `bytes`, so exact duplicates are stored once
    (every origin is listed in `image_sources`; `source` is the first seen); near duplicates
    point at the first stored image they resemble through `duplicate_of`. `bytes` are the picture
    a person sees (`core.imaging.normalise`): the given file where nothing had to change, else a
    PNG of the upright sRGB pixels; `normalised` says what was done and `original_sha256` is the
    hash of the bytes as given."""

    table: ClassVar[str] = "images"
    key: ClassVar[tuple[str, ...]] = ("image_id",)

    image_id: str
    source: str
    source_kind: str
    width: int
    height: int
    format: str
    mode: str
    n_bytes: int
    phash: str
    duplicate_of: str | None
    duplicate_distance: int | None
    license: str | None
    meta: dict[str, str]  # provenance: the source's own fields (file, index, row, frames...)
    bytes: bytes
    original_sha256: str | None = None  # the given bytes' hash (None: written before 2026-12-07)
    normalised: list[str] = []  # what ingest did to show it as a viewer does, in order


class ImageSourceRecord(Record):
    """One origin of a stored image: a file, a TSV or Parquet row, a packaged photo."""

    table: ClassVar[str] = "image_sources"
    key: ClassVar[tuple[str, ...]] = ("image_id", "source")

    image_id: str
    source: str
    source_kind: str
    license: str | None
    meta: dict[str, str]
    original_sha256: str | None = None  # this origin's bytes as given, before `normalise`


class ClipRecord(Record):
    """One stored video clip. `clip_id` is the sha256 of `bytes`; every frame was decoded to
    verify it and to learn its duration."""

    table: ClassVar[str] = "clips"
    key: ClassVar[tuple[str, ...]] = ("clip_id",)

    clip_id: str
    source: str
    source_kind: str
    name: str  # the file's path under its source folder: how annotations and releases name it
    duration: float
    fps: float
    width: int
    height: int
    codec: str
    container: str
    frames: int
    n_bytes: int
    license: str | None
    meta: dict[str, str]
    bytes: bytes


class SegmentRecord(Record):
    """One annotated action in a clip (the whole clip for SSv2), with the keyframes sampled from
    it (stored as images, `source_kind` `keyframe`). `order` is its place among its clip's
    segments by start time; `family` groups labels (SSv2's template, EPIC's verb). The label's
    parts, as the annotation gives them: SSv2's `placeholders` (what fills the template's
    `[something]`s, in order), EPIC's `noun` (what the verb acts on)."""

    table: ClassVar[str] = "segments"
    key: ClassVar[tuple[str, ...]] = ("segment_id",)

    segment_id: str
    clip_id: str
    video: str
    start: float
    end: float
    label: str
    family: str | None
    order: int
    source: str
    source_kind: str
    frames: list[str]  # image ids of the keyframes, in time order
    frame_times: list[float]
    placeholders: list[str] = []
    noun: str | None = None


class QuarantineRecord(Record):
    """Something a stage refused, with a reason code a user can filter on and a readable detail."""

    table: ClassVar[str] = "quarantine"
    key: ClassVar[tuple[str, ...]] = ("stage", "source", "reason")

    source: str  # where it came from, for a person: a path, `file.tsv#index`, `candidate:...`
    stage: str
    reason: str
    detail: str
    source_kind: str
    ref_kind: str = "source"  # what `ref_id` names: file, row, image, candidate, draft, source
    ref_id: str | None = (
        None  # the image id, question id or row index it refers to, when it has one
    )
    dimension: str | None = None  # the dimension a refused question or draft was for


# --- visual facts (extract) ---------------------------------------------------------------------


class Caption(Nested):
    text: str
    backend: str
    model: str | None
    prompt_id: str | None = None  # the template a model was asked with (`name@hash`), if any
    prompt_hash: str | None = None


class Instance(Nested):
    box: list[float]
    mask_area: int
    label: str | None
    attributes: list[str]
    dense_caption: str | None
    score: float


class OcrLine(Nested):
    text: str
    box: list[float]
    score: float


class ExtractorInfo(Nested):
    role: str
    backend: str
    model: str | None
    version: str
    config_hash: str


class VisualFactsRecord(Record):
    """What the extractors saw in one image under one extractor configuration."""

    table: ClassVar[str] = "visual_facts"
    key: ClassVar[tuple[str, ...]] = ("image_id", "config_hash")

    image_id: str
    config_hash: str
    captions: list[Caption]
    instances: list[Instance]
    ocr_lines: list[OcrLine]
    extractors: list[ExtractorInfo]
    # The second readings (another segmentation method, another OCR engine) that a template's
    # key must agree with (`extractors.agreement`); empty where none was configured or, for
    # text, where the first OCR read nothing.
    second_instances: list[Instance] = Field(default_factory=list)
    second_ocr_lines: list[OcrLine] = Field(default_factory=list)


# --- candidates (generate, or seeds from existing benchmarks) -----------------------------------


class MotionEvent(Nested):
    """One thing a tracked object did over a segment's keyframes."""

    object: str  # what the tracker calls it: its colour and shape, or its label
    event: str  # moved, grew, shrank, appeared, disappeared
    detail: str  # which way, from where to where; how much
    start_time: float
    end_time: float
    text: str  # the event as a sentence, as a model reads it


class MotionFactsRecord(Record):
    """What happens in one annotated segment, from tracking its keyframes' instances; keyed like
    the facts it was made from (the extractor configuration's hash)."""

    table: ClassVar[str] = "motion_facts"
    key: ClassVar[tuple[str, ...]] = ("segment_id", "config_hash")

    segment_id: str
    clip_id: str
    config_hash: str
    tracker: str
    frames: list[str]  # the keyframes tracked, in time order
    events: list[MotionEvent]


class NotAskedRecord(Record):
    """Why a picture was not asked one template kind's questions: a row per picture, dimension
    and template kind that asked it nothing (the reasons are listed in docs/generate.md), or
    `template` "*" with reason `no_facts` for a picture extract did not read. Written by generate;
    whether the picture got any question at all is in `candidates`."""

    table: ClassVar[str] = "not_asked"
    key: ClassVar[tuple[str, ...]] = ("image_id", "dimension", "template")

    image_id: str
    source: str  # the picture's origin as ingested (its path, a table's row, a package's photo)
    dimension: str
    template: str
    reason: str


class CandidateRecord(Record):
    """A multiple-choice question about one image. `answer` is the letter of the right option."""

    table: ClassVar[str] = "candidates"
    key: ClassVar[tuple[str, ...]] = ("question_id",)

    question_id: str
    image_id: str
    dimension: str
    question: str
    hint: str | None
    options: list[str]
    answer: str
    category: str | None
    l2_category: str | None
    split: str | None
    generator: str
    prompt_id: str | None
    prompt_hash: str | None
    evidence: list[str]
    source: str
    meta: dict[str, str]  # provenance of a seed question (its source's extra fields)
    flags: list[str] = []  # what the generate stage noticed (length outliers...)
    cost: float = 0.0  # what writing it cost (0 for templates and seeds)
    raw_output: str | None
    # A template question's parts, as `benchfoundry.meaning` writes every language from them: the
    # question's, and one dict per option in `options`' order (so the key's are at the answer
    # letter's index; an option a model wrote has none). Empty for other items.
    slots: dict[str, str] = {}
    option_slots: list[dict[str, str]] = []


# --- judgements, scores, reviews, results (later stages) ---------------------------------------


class TranslationRecord(Record):
    """An item's twin in another language (MMBench-CN's form): the English item's `question_id`
    and key, its text in `language` (BCP-47), how it was written (`template`, or the translator
    model) and the checks it passed before anyone sees it."""

    table: ClassVar[str] = "translations"
    key: ClassVar[tuple[str, ...]] = ("question_id", "language")

    question_id: str
    language: str
    question: str
    hint: str | None
    options: list[str]
    answer: str  # the English item's letter: a twin keeps its key
    method: str  # template, or llm:<model>
    checks: list[str]  # the checks it passed
    prompt_id: str | None = None
    raw_output: str | None = None


class JudgementRecord(Record):
    """One pass of one model over one question (text-only filter, consensus or evaluation)."""

    table: ClassVar[str] = "judgements"
    key: ClassVar[tuple[str, ...]] = ("question_id", "model", "mode", "pass_index")

    question_id: str
    model: str
    mode: str
    with_image: bool
    pass_index: int
    option_order: list[str]
    prompt: str
    raw_response: str | None
    extracted: str | None
    extracted_by: str
    correct: bool
    prompt_id: str | None = None  # the template that made `prompt` (`name@hash`), None for a file's
    prompt_hash: str | None = None
    error_kind: str | None = (
        None  # the failure's kind (timeout, rate_limit, connection...), or None
    )
    error: str | None  # the failure's message


class ScoredRecord(Record):
    """Hit counts, flags, difficulty and the selection decision for one question, with why.

    `hits_*` count models answering right on the first pass (MMStar's hits), `*_circular` under
    CircularEval (MMBench); `n_*_models` are the models that gave an answer (failed calls are
    left out of both). `decision` is one of selected, held_back, dropped, flagged, refused,
    unassessed."""

    table: ClassVar[str] = "scored"
    key: ClassVar[tuple[str, ...]] = ("question_id",)

    question_id: str
    image_id: str
    dimension: str
    answer: str
    hits_text: int
    hits_text_circular: int | None
    n_text_models: int
    text_hit_by: list[str]
    hits_vlm: int
    hits_vlm_circular: int | None
    n_vlm_models: int
    vlm_hit_by: list[str]
    flags: list[str]
    difficulty: str | None
    decision: str
    reason: str
    rank: int | None


class ReviewBatchRecord(Record):
    """A batch of candidates handed to one reviewer, in the order they are shown: flagged first,
    then by hit count ascending (MMStar's review order). `cross_check` marks the batch of samples
    also given to a second reviewer. The id is a hash of the reviewer and the questions, so an
    export of the same inputs gives the same batches."""

    table: ClassVar[str] = "review_batches"
    key: ClassVar[tuple[str, ...]] = ("batch_id",)

    batch_id: str
    reviewer: str
    dimension: str
    part: int  # 1, 2...: the batch's place among this reviewer's batches of this dimension
    question_ids: list[str]
    cross_check: bool
    created_at: str
    spec_hash: str
    language: str | None = None  # a batch of twins in this language; None: English items


REVIEW_DECISIONS = ("accept", "reject", "fix_answer", "edit", "move")


class ReviewRecord(Record):
    """One decision by one reviewer on one question, never overwritten: the latest per reviewer
    counts, the history stays; written from the review database (`decisions.store`).
    `candidate_hash` is the candidate's content when it was decided,
    so a decision on a candidate that changed since is flagged. `tool` is web, labelstudio, file,
    cli or auto (the automatic reviewer, never counted as a person)."""

    table: ClassVar[str] = "reviews"
    key: ClassVar[tuple[str, ...]] = ("question_id", "reviewer", "decided_at")

    question_id: str
    reviewer: str
    decision: Literal["accept", "reject", "fix_answer", "edit", "move"]
    new_answer: str | None = None
    new_question: str | None = None
    new_options: list[str] | None = None
    new_dimension: str | None = None
    reason: str | None = None
    note: str | None = None
    tool: str
    batch_id: str | None = None
    candidate_hash: str
    decided_at: str
    lead_time_s: float | None = None
    adjudication: bool = False  # an adjudicator's decision, settling a conflict between reviewers
    role: str | None = None  # the signed-in user's role when decided (none from a file or auto)
    language: str | None = None  # a decision on a twin in this language (`<id>@<language>`)


class ResultRecord(Record):
    """One model's answer to one question in one evaluation pass. For an open-ended question
    (MM-Vet) a row is one of the k gradings of the answer: `pass_index` is the grading, `score`
    the grade in [0, 1] (None when the grader's replies could not be read: `grade_error` says
    why, `grader_reply` holds the last of them), `category` the question's capabilities
    (comma-separated) and `l2_category` their integration (`ocr_spat`)."""

    table: ClassVar[str] = "results"
    key: ClassVar[tuple[str, ...]] = ("run_id", "model", "question_id", "pass_index")

    run_id: str
    model: str
    question_id: str
    pass_index: int
    option_order: list[str]
    response: str | None
    extracted: str | None
    extracted_by: str
    correct: bool
    score: float | None
    category: str | None
    l2_category: str | None
    grader_reply: str | None = None
    grade_error: str | None = None


class CallFailureRecord(Record):
    """A question an evaluation could not get answered: the model's call failed after the
    gateway's retries, or the model was stopped before it was asked. The question is scored
    wrong and counted under `reason` (`HTTP 400`, `timeout`, `malformed reply`, `not asked`...);
    a later run asks it again. One row per time it failed (`at`), the newest is the one that
    counts while the question has no result."""

    table: ClassVar[str] = "call_failures"
    key: ClassVar[tuple[str, ...]] = ("run_id", "model", "question_id", "at")

    run_id: str
    model: str
    question_id: str
    at: str  # when, ISO 8601 (UTC)
    reason: str  # what a reader groups by
    detail: str  # the error as the gateway gave it, credentials redacted


ALL_RECORDS: tuple[type[Record], ...] = (
    ImageRecord,
    ImageSourceRecord,
    ClipRecord,
    SegmentRecord,
    QuarantineRecord,
    VisualFactsRecord,
    MotionFactsRecord,
    CandidateRecord,
    NotAskedRecord,
    TranslationRecord,
    JudgementRecord,
    ScoredRecord,
    ReviewBatchRecord,
    ReviewRecord,
    ResultRecord,
    CallFailureRecord,
)

RECORDS_BY_TABLE: dict[str, type[Record]] = {r.table: r for r in ALL_RECORDS}
