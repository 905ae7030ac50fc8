"""The flag measured where it matters (issue 54): the evidence reader's verdicts on the
generator's own keys on inputs it was not tuned on, apart from seeded wrong keys. Sources:
the field pictures (`field_pictures`, judged by `field_check`: a question a person would
hesitate on counts as wrong), the same pictures as a heavy JPEG (`field-jpeg`, quality 30)
and the packaged pictures (`hard_packaged`: chessboards, the
phantom, matplotlib's logo, photographs), each with the keys of today's generator (two
readings) and with older single-reading keys (`generate_check.SINGLE_READING`), which are
wrong more often; and the hard drawings (`hard_drawings`, with the packaged pictures), which
the two readings were tuned on: there only the single-reading keys are inputs the generator
was not tuned for."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from benchfoundry.core.records import CandidateRecord
from benchfoundry.devtools.field_check import check_field
from benchfoundry.devtools.field_pictures import write_field_corpus
from benchfoundry.devtools.flag_check import FlagRates, flag_rates
from benchfoundry.devtools.generate_check import build_templates, truth_by_image
from benchfoundry.devtools.hard_drawings import write_hard_corpus
from benchfoundry.devtools.hard_packaged import packaged_pictures
from benchfoundry.devtools.synthetic import load_truth
from benchfoundry.devtools.truth_check import Verdict

SOURCES = ("field", "field-jpeg", "packaged", "hard")
JPEG_QUALITY = 30  # the field pictures again, as a phone's heavy compression leaves them


@dataclass
class SourceFlags:
    """One source's keys with one kind of reading: pictures, candidates and the flag's rates."""

    source: str
    readings: str  # "two readings" (today's keys) or "single reading" (older keys)
    pictures: int
    candidates: int
    flags: FlagRates = field(default_factory=FlagRates)


def field_truth(candidate: CandidateRecord, scene: dict, letter: str | None = None) -> Verdict:
    """The field check of a key (at `letter`): a careful person's answer, hesitation wrong."""
    keyed = candidate if letter is None else candidate.model_copy(update={"answer": letter})
    return check_field(keyed, scene)


def compress(folder: Path, quality: int) -> None:
    """Each picture of a written corpus re-encoded as JPEG at `quality`, its truth kept (the
    same pixels' geometry) and pointed at the new file."""
    lines = []
    for line in load_truth(folder):
        path = Path(folder) / line["file"]
        with Image.open(path) as image:
            image.convert("RGB").save(path.with_suffix(".jpg"), quality=quality)
        path.unlink()
        lines.append({**line, "file": str(Path(line["file"]).with_suffix(".jpg"))})
    text = "\n".join(json.dumps(line, sort_keys=True) for line in lines) + "\n"
    (Path(folder) / "truth.jsonl").write_text(text, encoding="utf-8")


def write_packaged_corpus(folder: Path) -> int:
    """The packaged pictures and their hand-written truth, as `write_field_corpus` writes."""
    images = Path(folder) / "images"
    images.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, data, picture in packaged_pictures():
        (images / name).write_bytes(data)
        lines.append({"file": f"images/{name}", "scene_id": name.rsplit(".", 1)[0], **picture})
    text = "\n".join(json.dumps(line, sort_keys=True) for line in lines) + "\n"
    (Path(folder) / "truth.jsonl").write_text(text, encoding="utf-8")
    return len(lines)


def own_key_flags(
    work: Path, seed: int = 0, per_family: int = 3, sources: tuple[str, ...] = SOURCES
) -> list[SourceFlags]:
    """The flag on each source's own keys, with two readings and with one (each a build of
    ingest, extract and the template generator under `work`)."""
    out = []
    for source in sources:
        corpus = work / f"{source}-corpus"
        if source in ("field", "field-jpeg"):
            pictures = sum(write_field_corpus(corpus, seed, per_family).values())
            if source == "field-jpeg":
                compress(corpus, JPEG_QUALITY)
        elif source == "hard":
            pictures = sum(write_hard_corpus(corpus, seed, per_family).values())
        else:
            pictures = write_packaged_corpus(corpus)
        truth = field_truth if source.startswith("field") else None
        for single in (False, True):
            build = work / f"{source}-{'single' if single else 'two'}"
            run, _ = build_templates(build, corpus, single)
            scene_of = truth_by_image(run, corpus)
            rates = flag_rates(run, scene_of, truth) if truth else flag_rates(run, scene_of)
            out.append(
                SourceFlags(
                    source,
                    "single reading" if single else "two readings",
                    pictures,
                    sum(1 for _ in run.table(CandidateRecord).records()),
                    rates,
                )
            )
    return out
