"""Template questions for SEED-Bench's temporal dimensions, from annotated video segments: the
annotation is the key (as in the paper), the distractors come from the annotation vocabulary.

- `action_label` (action recognition): "What action is performed in the video?", the segment's
  label;
- `next_action` (action prediction): the clip up to a segment's end, "What is most likely to
  happen next?", the next segment's label;
- `action_order` (procedure understanding): the order of a video's key actions, the right order
  and three wrong ones.

Offline distractors: for SSv2-style labels the same objects in the other templates (`Moving
[something] up` -> the same thing moved down), then the labels nearest to the answer by the
packaged sentence encoder; never the answer again (compared without case and spacing), never a
duplicate. Each draft names its clip and stretch in `meta` and rests on the segments as evidence.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchfoundry import meaning
from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import SegmentRecord
from benchfoundry.core.taxonomy import Taxonomy
from benchfoundry.meaning.parts import listed, listed_steps
from benchfoundry.tasks.generate.drafts import Draft
from benchfoundry.tasks.generate.facts_scene import SegmentsScene

TEMPORAL_KINDS = ("action_label", "next_action", "action_order")
NOT_ASKED = {
    "single_segment": "the clip has one annotated action: nothing comes next",
    "few_segments": "fewer than three distinct key actions: no order to ask about",
    "repeated_actions": "an action repeats among the key actions, so orders are ambiguous",
    "no_single_answer": "by what the question means (`benchfoundry.meaning`), the annotated "
    "segments give it no single answer, or a wrong option says it too",
    "overlapping_segments": "annotated actions overlap in time (EPIC-KITCHENS' narrations often "
    "do), so what is shown would hold the next one, or the order is not one",
}
KEY_ACTIONS = 5  # at most this many actions in an order question
_SLOT = re.compile(r"\[[^\]]+\]")

Encode = Callable[[list[str]], Sequence[Sequence[float]]]


def norm(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def action_slots(segment: SegmentRecord) -> dict[str, str]:
    """A segment's action as slots: its label, with the parts its annotation gave (SSv2's
    template and placeholders, when they fill the template to the label; a verb and its noun);
    a label without them is its label alone."""
    slots = {"label": segment.label}
    template, placeholders = segment.family or "", segment.placeholders
    if placeholders and len(_SLOT.findall(template)) == len(placeholders):
        if norm(fill(template, placeholders)) == norm(segment.label):
            slots |= {"template": template, "placeholders": listed(placeholders)}
    elif template and segment.noun and not _SLOT.search(template):
        slots |= {"verb": template, "action_noun": segment.noun}
    return slots


def fill(template: str, placeholders: Sequence[str]) -> str:
    """An SSv2 template with its `[something]`s filled, in order."""
    text = template
    for placeholder in placeholders:
        text = _SLOT.sub(lambda _, p=placeholder: p, text, count=1)
    return text


@dataclass
class Vocabulary:
    """Every label of the run, the parts of each (as its annotation gave them), and for SSv2
    labels the templates and placeholders they fill."""

    labels: list[str]
    fills: dict[str, tuple[str, list[str]]] = field(
        default_factory=dict
    )  # label -> (template, placeholders)
    encode: Encode | None = None
    parts: dict[str, dict[str, str]] = field(default_factory=dict)  # label -> its action's slots

    @classmethod
    def of(cls, segments: list[SegmentRecord], encode: Encode | None) -> Vocabulary:
        labels = sorted({s.label for s in segments})
        fills: dict[str, tuple[str, list[str]]] = {}
        parts: dict[str, dict[str, str]] = {}
        for s in segments:
            slots = action_slots(s)
            if len(slots) > len(parts.get(s.label, {})):
                parts[s.label] = slots
            if "template" in slots:
                fills[s.label] = (slots["template"], list(s.placeholders))
        vocabulary = cls(labels, fills, encode, parts)
        for label in sorted(fills):  # the swaps' parts: another template, the same things
            for text, template in vocabulary.swapped(label):
                things = listed(fills[label][1])
                parts.setdefault(
                    text, {"label": text, "template": template, "placeholders": things}
                )
        return vocabulary

    def templates(self) -> list[str]:
        return sorted({t for t, _ in self.fills.values()})

    def swapped(self, label: str) -> list[tuple[str, str]]:
        """(label, template): the label's own objects put into every other template with as
        many slots."""
        if label not in self.fills:
            return []
        template, placeholders = self.fills[label]
        return [
            (fill(other, placeholders), other)
            for other in self.templates()
            if other != template and len(_SLOT.findall(other)) == len(placeholders)
        ]

    def swaps(self, label: str) -> list[str]:
        """The label's own objects put into every other template with as many slots."""
        return [text for text, _ in self.swapped(label)]

    def slots(self, label: str) -> dict[str, str]:
        """An option's slots: the label's action, with its parts where they are known."""
        return self.parts.get(label, {"label": label})

    def distractors(
        self, answer: str, k: int, avoid: Sequence[str] = (), prefer: Sequence[str] = ()
    ) -> list[str]:
        """`k` wrong labels: the preferred ones and the template swaps first, then the nearest
        labels; none equal to the answer or to anything in `avoid`, none twice."""
        banned = {norm(answer), *(norm(a) for a in avoid)}
        chosen: list[str] = []

        def take(options: Sequence[str]) -> None:
            for option in options:
                if len(chosen) < k and norm(option) not in banned:
                    banned.add(norm(option))
                    chosen.append(option)

        take(list(prefer))
        take(self._nearest(answer, self.swaps(answer)))
        take(self._nearest(answer, self.labels))
        return chosen

    def _nearest(self, answer: str, pool: list[str]) -> list[str]:
        pool = [p for p in dict.fromkeys(pool) if norm(p) != norm(answer)]
        if not pool or self.encode is None:
            return sorted(pool)
        query, *vectors = self.encode([answer, *pool])
        scored = [
            (sum(a * b for a, b in zip(query, v, strict=True)), p)
            for v, p in zip(vectors, pool, strict=True)
        ]
        return [p for _, p in sorted(scored, key=lambda x: (-float(x[0]), x[1]))]


def _window(segments: list[SegmentRecord]) -> dict[str, str]:
    first, last = segments[0], segments[-1]
    return {
        "video": first.video,
        "clip_id": first.clip_id,
        "start": f"{first.start:g}",
        "end": f"{last.end:g}",
        "segments": ",".join(s.segment_id for s in segments),
        "frames": ",".join(f for s in segments for f in s.frames),
    }


def _evidence(segments: list[SegmentRecord]) -> list[str]:
    return [f"segment {s.start:g}-{s.end:g} s of {s.video}: {s.label}" for s in segments]


def _meant(
    kind: str,
    slots: dict[str, str],
    options: list[dict[str, str]],
    shown: list[SegmentRecord],
    about: list[SegmentRecord],
) -> bool:
    """Whether the key is what the kind means on the segments (`meaning.answer`, the clip's
    annotated actions as the scene) and no wrong option says it too."""
    scene = SegmentsScene([(s, action_slots(s)) for s in about], shown[0].start, shown[-1].end)
    try:
        read = meaning.answer(kind, scene, slots)
    except (meaning.NoAnswer, meaning.Unsure):
        return False
    verdicts = [meaning.fits(kind, read, o) for o in options]
    return verdicts[0] is True and not any(verdicts[1:])


def _draft(
    kind: str,
    dimension: str,
    image: str,
    slots: dict[str, str],
    options: list[dict[str, str]],
    shown: list[SegmentRecord],
    about: list[SegmentRecord],
) -> Draft | None:
    """A draft written from its parts: `options` the key's slots first, then the wrong ones';
    None where the key is not what the kind means on the segments."""
    if not _meant(kind, slots, options, shown, about):
        return None
    return Draft(
        image_id=image,
        dimension=dimension,
        question=meaning.question(kind, slots, "en"),
        correct=meaning.option(kind, options[0], "en"),
        distractors=[meaning.option(kind, o, "en") for o in options[1:]],
        generator=f"template:{kind}",
        evidence=_evidence(about),
        meta=_window(shown),
        slots=slots,
        option_slots=options,
    )


def _order(labels: Sequence[str], parts: dict[str, dict[str, str]]) -> dict[str, str]:
    """Actions in an order: their labels, and each one's slots."""
    return {"labels": listed(labels), "actions": listed_steps([parts[x] for x in labels])}


def _middle(segment: SegmentRecord) -> str:
    return segment.frames[len(segment.frames) // 2]


@dataclass
class TemporalDrafts:
    drafts: list[Draft] = field(default_factory=list)
    not_asked: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, dimension: str, draft: Draft | None) -> None:
        if draft is None:
            self.not_asked[(dimension, "no_single_answer")] += 1
        else:
            self.drafts.append(draft)


def temporal_drafts(
    segments: list[SegmentRecord],
    taxonomy: Taxonomy,
    seed: int = 0,
    encode: Encode | None = None,
    n_options: int = 4,
) -> TemporalDrafts:
    """Template questions for every clip's segments, for the taxonomy's dimensions that list a
    temporal kind; a counted reason where a clip cannot support one."""
    wanted = {k: d.id for d in taxonomy.leaves() for k in d.templates if k in TEMPORAL_KINDS}
    out = TemporalDrafts()
    if not wanted or not segments:
        return out
    # Distractors come from the same annotation set: its labels share a style and a vocabulary.
    by_kind: dict[str, list[SegmentRecord]] = defaultdict(list)
    for segment in segments:
        by_kind[segment.source_kind].append(segment)
    vocabularies = {kind: Vocabulary.of(group, encode) for kind, group in by_kind.items()}
    by_clip: dict[tuple[str, str], list[SegmentRecord]] = defaultdict(list)
    for segment in segments:  # the same bytes under two names: two videos, two orders
        by_clip[(segment.clip_id, segment.video)].append(segment)
    k = n_options - 1
    for clip_id in sorted(by_clip):
        clip = sorted(by_clip[clip_id], key=lambda s: (s.order, s.start))
        vocabulary = vocabularies[clip[0].source_kind]
        if dimension := wanted.get("action_label"):
            for s in clip:
                wrong = [vocabulary.slots(w) for w in vocabulary.distractors(s.label, k)]
                options = [action_slots(s), *wrong]
                out.add(
                    dimension, _draft("action_label", dimension, _middle(s), {}, options, [s], [s])
                )
        if dimension := wanted.get("next_action"):
            if len(clip) < 2:
                out.not_asked[(dimension, "single_segment")] += 1
            for i in range(1, len(clip)):
                answer = clip[i]
                if any(s.end > answer.start + 1e-6 for s in clip[:i]):
                    out.not_asked[(dimension, "overlapping_segments")] += 1
                    continue  # the stretch shown would hold the answer
                later = [s.label for s in clip[i + 1 :]]
                wrong = [
                    vocabulary.slots(w)
                    for w in vocabulary.distractors(answer.label, k, prefer=later)
                ]
                options = [action_slots(answer), *wrong]
                out.add(
                    dimension,
                    _draft(
                        "next_action",
                        dimension,
                        clip[i - 1].frames[-1],
                        {},
                        options,
                        clip[:i],
                        clip[: i + 1],
                    ),
                )
        if dimension := wanted.get("action_order"):
            order = _key_actions(clip)
            labels = [s.label for s in order]
            if len(order) < 3:
                out.not_asked[(dimension, "few_segments")] += 1
            elif len({norm(x) for x in labels}) < len(labels):
                out.not_asked[(dimension, "repeated_actions")] += 1
            elif any(a.end > b.start + 1e-6 for a, b in itertools.pairwise(order)):
                out.not_asked[(dimension, "overlapping_segments")] += 1
            else:
                rng = random.Random(content_hash({"clip": clip_id[0], "seed": seed}))
                wrong = _wrong_orders(labels, k, rng)
                parts = {s.label: action_slots(s) for s in order}
                out.add(
                    dimension,
                    _draft(
                        "action_order",
                        dimension,
                        _middle(order[len(order) // 2]),
                        _order(sorted(labels, key=norm), parts),
                        [_order(labels, parts), *(_order(w, parts) for w in wrong)],
                        clip,
                        order,
                    ),
                )
    return out


def _key_actions(clip: list[SegmentRecord]) -> list[SegmentRecord]:
    """The clip's actions in order, at most `KEY_ACTIONS` spread evenly over it."""
    if len(clip) <= KEY_ACTIONS:
        return clip
    step = (len(clip) - 1) / (KEY_ACTIONS - 1)
    return [clip[round(i * step)] for i in range(KEY_ACTIONS)]


def _wrong_orders(labels: list[str], k: int, rng: random.Random) -> list[list[str]]:
    """`k` orders that are not the right one: first those that swap two neighbours (close to
    it), then others, drawn with the seeded generator."""
    right = tuple(labels)
    near = []
    for i in range(len(labels) - 1):
        swapped = list(labels)
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        near.append(tuple(swapped))
    rng.shuffle(near)
    chosen = list(dict.fromkeys(near))[: max(1, k - 1)]
    if len(labels) <= 6:
        others = [p for p in itertools.permutations(labels) if p != right and p not in chosen]
    else:
        others = [tuple(rng.sample(labels, len(labels))) for _ in range(20)]
        others = [p for p in dict.fromkeys(others) if p != right and p not in chosen]
    rng.shuffle(others)
    chosen += others[: k - len(chosen)]
    return [list(p) for p in chosen]
