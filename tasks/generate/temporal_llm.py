"""Distractors for temporal questions from the generator LLM, as SEED-Bench has them written:
the right answer (the annotation) stays the key, the model writes the wrong options. A reply
that is not the asked JSON, repeats the answer or itself, or gives too few leaves the offline
distractors in place, counted by reason (never a silent change)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, Request
from benchfoundry.prompts import load
from benchfoundry.tasks.generate.drafts import Draft
from benchfoundry.tasks.generate.templates_temporal import norm

SCHEMA = {
    "type": "object",
    "properties": {"distractors": {"type": "array", "items": {"type": "string"}}},
    "required": ["distractors"],
    "additionalProperties": False,
}
KINDS = ("template:action_label", "template:next_action")  # orders need no model: permutations


def parse(text: str, answer: str, k: int) -> list[str]:
    """`k` distractors from the reply; ValueError says what is wrong with it."""
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    try:
        raw = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    items = raw.get("distractors") if isinstance(raw, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ValueError("no list of strings under 'distractors'")
    seen = {norm(answer)}
    kept = []
    for item in (i.strip() for i in items):
        if item and norm(item) not in seen and len(item) <= 3 * max(20, len(answer)):
            seen.add(norm(item))
            kept.append(item)
    if len(kept) < k:
        raise ValueError(f"{len(kept)} usable distractors of {k} (empty, repeated or the answer)")
    return kept[:k]


def with_llm_distractors(
    gateway: Gateway,
    drafts: Sequence[Draft],
    model: str,
    examples: dict[str, list[str]],
    motion: dict[str, list[str]],
) -> tuple[list[Draft], Counter[tuple[str, str]]]:
    """The drafts, recognition and prediction ones with the model's distractors where its reply
    is usable (`generator` then names it); (dimension, outcome) counts of what happened."""
    template = load("temporal_distractors")
    asked = [i for i, d in enumerate(drafts) if d.generator in KINDS]
    requests = []
    for i in asked:
        d = drafts[i]
        text = template.render(
            question=d.question,
            answer=d.correct,
            examples=[e for e in examples.get(d.meta.get("clip_id", ""), []) if e != d.correct][
                :12
            ],
            motion=motion.get(d.image_id, []),
            k=len(d.distractors),
        )
        params = GenerateParams(
            json_schema=SCHEMA, max_tokens=300, prompt_version=template.prompt_id
        )
        requests.append(Request(model, text, params))
    out = list(drafts)
    counts: Counter[tuple[str, str]] = Counter()
    for i, reply in zip(asked, gateway.generate_many(requests), strict=True):
        d = drafts[i]
        if isinstance(reply, ModelCallError):
            counts[(d.dimension, f"llm_distractors_offline:{reply.kind}")] += 1
            continue
        try:
            wrong = parse(reply.text, d.correct, len(d.distractors))
        except ValueError:
            counts[(d.dimension, "llm_distractors_offline:malformed_output")] += 1
            continue
        counts[(d.dimension, "llm_distractors")] += 1
        out[i] = replace(
            d,
            distractors=wrong,
            option_slots=d.option_slots[:1] + [{} for _ in wrong],  # the model's have no parts
            generator=f"{d.generator}+llm:{model}",
            prompt_id=template.prompt_id,
            prompt_hash=template.version,
            raw_output=reply.text,
            cost=d.cost + reply.cost,
        )
    return out, counts
