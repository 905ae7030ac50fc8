"""LLM question writing (SEED-Bench): the image's visual context, rendered into the prompt of one
evaluation dimension, asks a generator model for one question as JSON (structured output). A
malformed answer gets one repair attempt; then the draft is refused with the reason and the raw
output kept."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.reasons import Rejection
from benchfoundry.core.records import VisualFactsRecord
from benchfoundry.core.taxonomy import Dimension
from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, Request
from benchfoundry.prompts import load
from benchfoundry.storage.visual_context import render
from benchfoundry.tasks.generate.drafts import Draft

SCHEMA = {
    "type": "object",
    "properties": {
        "question": {"type": "string"},
        "options": {"type": "array", "items": {"type": "string"}},
        "answer": {"type": "string"},
        "evidence": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["question", "options", "answer", "evidence"],
    "additionalProperties": False,
}


class Written(BaseModel):
    question: str
    options: list[str]
    answer: str
    evidence: list[str] = []


def parse(text: str, n_options: int) -> Written:
    """The JSON the prompt asks for (a ```json fence is tolerated); ValueError says what is wrong."""
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    try:
        written = Written.model_validate(json.loads(body))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at character {exc.pos})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValidationError as exc:
        raise ValueError(
            "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        ) from None
    if len(written.options) != n_options:
        raise ValueError(f"{len(written.options)} options, {n_options} asked")
    letter = written.answer.strip().strip("().").upper()
    if letter not in LETTERS[: len(written.options)]:
        raise ValueError(f"answer '{written.answer}' is not the letter of an option")
    return written.model_copy(update={"answer": letter})


@dataclass(frozen=True)
class Job:
    facts: VisualFactsRecord
    dimension: Dimension
    model: str


def llm_drafts(
    gateway: Gateway,
    jobs: Sequence[Job],
    dimension_names: dict[str, str],
    n_options: int,
    context_chars: int,
) -> tuple[list[Draft], list[Rejection]]:
    """One question per job; drafts for the good ones, rejections (with raw output) for the rest."""
    repair = load("generate_repair")
    prompts = []
    for job in jobs:
        template = load(job.dimension.prompt or "generate_leaf")
        text = template.render(
            visual_context=render(job.facts, context_chars),
            dimension=dimension_names[job.dimension.id],
            n_options=n_options,
        )
        prompts.append((template, text))
    first = gateway.generate_many(
        [
            Request(
                job.model,
                text,
                GenerateParams(
                    json_schema=SCHEMA, max_tokens=400, prompt_version=template.prompt_id
                ),
            )
            for job, (template, text) in zip(jobs, prompts, strict=True)
        ]
    )
    drafts, rejections = [], []
    retry: list[tuple[int, str, str]] = []
    results: dict[int, tuple[Written, str, float]] = {}
    for i, (job, reply) in enumerate(zip(jobs, first, strict=True)):
        source = f"image:{job.facts.image_id}#{job.dimension.id}"
        if isinstance(reply, ModelCallError):
            rejections.append(
                Rejection(
                    source,
                    f"llm:{job.model}",
                    "model_failed",
                    str(reply),
                    stage="generate",
                    ref_kind="draft",
                    ref_id=job.facts.image_id,
                    dimension=job.dimension.id,
                )
            )
            continue
        try:
            results[i] = (parse(reply.text, n_options), reply.text, reply.cost)
        except ValueError as exc:
            retry.append((i, str(exc), reply.text))
    if retry:
        second = gateway.generate_many(
            [
                Request(
                    jobs[i].model,
                    repair.render(problem=problem, raw_output=raw, n_options=n_options),
                    GenerateParams(
                        json_schema=SCHEMA, max_tokens=400, prompt_version=repair.prompt_id
                    ),
                )
                for i, problem, raw in retry
            ]
        )
        for (i, problem, raw), reply in zip(retry, second, strict=True):
            job = jobs[i]
            source = f"image:{job.facts.image_id}#{job.dimension.id}"
            try:
                if isinstance(reply, ModelCallError):
                    raise ValueError(f"the repair call failed: {reply}")
                results[i] = (parse(reply.text, n_options), reply.text, reply.cost)
            except ValueError as exc:
                detail = f"{problem}; after repair: {exc}; raw output: {raw[:2000]}"
                rejections.append(
                    Rejection(
                        source,
                        f"llm:{job.model}",
                        "malformed_output",
                        detail,
                        stage="generate",
                        ref_kind="draft",
                        ref_id=job.facts.image_id,
                        dimension=job.dimension.id,
                    )
                )
    for i, (written, raw, cost) in sorted(results.items()):
        job, (template, _) = jobs[i], prompts[i]
        index = LETTERS.index(written.answer)
        drafts.append(
            Draft(
                image_id=job.facts.image_id,
                dimension=job.dimension.id,
                question=written.question.strip(),
                correct=written.options[index].strip(),
                distractors=[o.strip() for k, o in enumerate(written.options) if k != index],
                generator=f"llm:{job.model}",
                prompt_id=template.prompt_id,
                prompt_hash=template.version,
                evidence=written.evidence,
                raw_output=raw,
                cost=cost,
            )
        )
    return drafts, rejections
