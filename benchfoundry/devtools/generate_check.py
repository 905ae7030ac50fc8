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
