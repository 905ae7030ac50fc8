"""Measure the template generator on synthetic scenes: render, ingest, extract, generate, check."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchfoundry.core.letters import index_of
from benchfoundry.core.records import CandidateRecord, ImageSourceRecord
from benchfoundry.devtools.synthetic import load_truth, write_corpus
from benchfoundry.devtools.truth_check import check
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.models import FolderSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.stage import run as extract_stage
from benchfoundry.tasks.generate.options import GenerateOptions
from benchfoundry.tasks.generate.stage import generate_all
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.stage import run as ingest_stage


@dataclass
class Accuracy:
    questions: int = 0
    right: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)
    letters: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)
    per_dimension: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.right / max(1, self.questions)


def template_key_accuracy(
    work: Path, scenes: int, seed: int = 7, contact: int = 0, flat: int = 0
) -> Accuracy:
    """Render `scenes` object and text scenes (a quarter text), `contact` contact scenes and
    `flat` flat scenes (large pure-colour shapes on white, hard-edged or anti-aliased), run
    ingest, extract and the template generator, and check every key against the truth."""
    n_text = scenes // 4
    write_corpus(
        work / "corpus",
        n_objects=scenes - n_text,
        n_text=n_text,
        seed=seed,
        n_contact=contact,
        n_flat=flat,
    )
    run = RunFolder(work / "run")
    ingest_stage(
        StageRun.make(
            run, sources=[FolderSource(path=work / "corpus" / "images")], ingest=IngestOptions()
        )
    )
    extract_stage(StageRun.make(run, extract=ExtractOptions(captioner="none")))
    summary = generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    truth = {t["file"].rsplit("/", 1)[-1]: t for t in load_truth(work / "corpus")}
    scene_of = {
        link.image_id: truth[link.source.rsplit("/", 1)[-1]]
        for link in run.table(ImageSourceRecord).records()
    }
    result = Accuracy(per_dimension=summary.per_dimension)
    for candidate in run.table(CandidateRecord).records():
        verdict = check(
            candidate.question, candidate.options, candidate.answer, scene_of[candidate.image_id]
        )
        kind = candidate.generator.removeprefix("template:")
        counts = result.by_kind.setdefault(kind, [0, 0])
        counts[1] += 1
        result.questions += 1
        result.letters[candidate.answer] += 1
        if verdict.right:
            counts[0] += 1
            result.right += 1
        else:
            result.wrong.append(
                f"{scene_of[candidate.image_id]['scene_id']}: {candidate.question} keyed "
                f"{candidate.options[index_of(candidate.answer)]!r}, truth {verdict.expected!r} "
                f"({verdict.why})"
            )
    return result


@dataclass
class TemporalAccuracy:
    """Keys of the temporal templates against the annotation files, and the time each stage
    took on the clips (for throughput figures)."""

    by_kind: dict[str, list[int]] = field(default_factory=dict)
    repeated_options: int = 0
    wrong: list[str] = field(default_factory=list)
    clips: int = 0
    keyframes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def temporal_key_accuracy(
    work: Path, clips: int, procedures: int, seed: int = 7, keyframes: int = 4
) -> TemporalAccuracy:
    """Render `clips` single-action clips and `procedures` procedure videos, build ingest,
    extract and the template generator from them, and check every temporal key against the
    annotation files themselves (not the run's tables)."""
    import csv
    import json
    import time

    from benchfoundry.core.records import ClipRecord, SegmentRecord
    from benchfoundry.devtools.synthetic_video import write_clips
    from benchfoundry.sources.models import VideoSource

    write_clips(work / "corpus", clips, procedures, seed)
    sources = []
    if clips:
        folder = work / "corpus" / "clips"
        sources.append(VideoSource(path=folder, annotations=folder / "labels.json", format="ssv2"))
    if procedures:
        folder = work / "corpus" / "procedures"
        sources.append(VideoSource(path=folder, annotations=folder / "segments.csv"))
    run = RunFolder(work / "run")
    result = TemporalAccuracy()
    started = time.perf_counter()
    ingest_stage(StageRun.make(run, sources=sources, ingest=IngestOptions(keyframes=keyframes)))
    result.seconds["ingest"] = time.perf_counter() - started
    started = time.perf_counter()
    extract_stage(StageRun.make(run, extract=ExtractOptions(captioner="none")))
    result.seconds["extract"] = time.perf_counter() - started
    started = time.perf_counter()
    generate_all(run, GenerateOptions(llm=False), "seed_bench", {})
    result.seconds["generate"] = time.perf_counter() - started
    result.clips = len(run.table(ClipRecord).records())
    result.keyframes = len({f for s in run.table(SegmentRecord).records() for f in s.frames})

    annotated: dict[str, list[tuple[float, float, str]]] = {}
    if clips:
        for entry in json.loads((work / "corpus" / "clips" / "labels.json").read_text()):
            annotated[f"{entry['id']}.mp4"] = [(0.0, -1.0, entry["label"])]
    if procedures:
        with open(work / "corpus" / "procedures" / "segments.csv", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                annotated.setdefault(row["video"], []).append(
                    (float(row["start"]), float(row["end"]), row["label"])
                )
    for c in run.table(CandidateRecord).records():
        steps = sorted(annotated[c.meta["video"]])
        start, end = float(c.meta["start"]), float(c.meta["end"])
        kind = c.generator.removeprefix("template:")
        if kind == "action_label":
            truth = next(label for s, e, label in steps if s == start and (e < 0 or e == end))
        elif kind == "next_action":
            truth = next(label for s, _, label in steps if s >= end)
        else:
            truth = ", then ".join(label for _, _, label in steps)
        key = c.options[index_of(c.answer)]
        counts = result.by_kind.setdefault(kind, [0, 0])
        counts[1] += 1
        counts[0] += key == truth
        if key != truth:
            result.wrong.append(f"{c.meta['video']} {kind}: keyed {key!r}, truth {truth!r}")
        result.repeated_options += len({o.casefold().strip() for o in c.options}) < len(c.options)
    return result
