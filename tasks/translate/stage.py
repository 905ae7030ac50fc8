"""The translate stage (MMBench's bilingual form): a twin of every included item in each
language, written natively from its parts where the item carries them (a template question's
kind and slots, `native.py`: no model, the same key), else by the translator model (one call
per item, cached), and checked before people see it (`checks.py`). A twin that fails a check,
or that no one can write, is quarantined with its reason; nothing is published in a language
without it."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.errors import UserError
from benchfoundry.core.reasons import Rejection, register
from benchfoundry.core.records import (
    CandidateRecord,
    QuarantineRecord,
    ScoredRecord,
    TranslationRecord,
)
from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, Request
from benchfoundry.gateway.models import protect_models
from benchfoundry.prompts import load
from benchfoundry.storage.refusals import refused_candidates
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.translate import checks, native
from benchfoundry.tasks.translate.options import TranslateOptions
from benchfoundry.tasks.translate.summary import TranslateSummary

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun

REASONS = register("translate", checks.REASONS)
LANGUAGE_NAMES = {"zh": "Simplified Chinese"}
SCHEMA = {
    "type": "object",
    "properties": {
        "question": {"type": "string"},
        "hint": {"type": ["string", "null"]},
        "options": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["question", "options"],
}


class TranslateError(UserError, ValueError):
    """The run cannot be translated as the options ask (no quality-control decisions yet)."""


def included(run: RunFolder, options: TranslateOptions) -> list[CandidateRecord]:
    """The candidates that get twins, in id order (those the generate stage refused never)."""
    refused = set(refused_candidates(run))
    candidates = [c for c in run.table(CandidateRecord).records() if c.question_id not in refused]
    if options.include != "all":
        decisions = {s.question_id: s.decision for s in run.table(ScoredRecord).records()}
        if not decisions:
            raise TranslateError(
                f"options.translate.include is {options.include}, but the run has no "
                "quality-control decisions: run select first, or include: all"
            )
        candidates = [c for c in candidates if decisions.get(c.question_id) in options.include]
    return sorted(candidates, key=lambda c: c.question_id)


def _parse(text: str, n_options: int) -> tuple[str, str | None, list[str]]:
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    try:
        raw: Any = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
        raise ValueError("no 'question' string")
    options = raw.get("options")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise ValueError("no 'options' list of strings")
    hint = raw.get("hint")
    return (
        raw["question"].strip(),
        hint.strip() if isinstance(hint, str) and hint.strip() else None,
        [o.strip() for o in options],
    )


class Translation:
    """One run's translation work: twins made, refusals, counts."""

    def __init__(self, options: TranslateOptions) -> None:
        self.options = options
        self.records: list[TranslationRecord] = []
        self.rejections: list[Rejection] = []
        self.methods: Counter[str] = Counter()

    def refuse(
        self, c: CandidateRecord, language: str, reason: str, detail: str, raw: str | None = None
    ) -> None:
        if raw is not None:
            detail = f"{detail}; raw output: {raw[:1000]}"
        self.rejections.append(
            Rejection(
                f"translation:{c.question_id}:{language}",
                c.generator,
                reason,
                detail,
                stage="translate",
                ref_kind="translation",
                ref_id=f"{c.question_id}:{language}",
                dimension=c.dimension,
            )
        )

    def offer(
        self,
        c: CandidateRecord,
        language: str,
        written: tuple[str, str | None, list[str]],
        method: str,
        prompt_id: str | None = None,
        raw: str | None = None,
    ) -> None:
        question, hint, options = written
        found = native.parts(c)
        kept = found.kept(list(c.options)) if found else []  # printed text stays as printed
        failed = checks.problems(
            c.question, c.options, c.answer, question, options, c.answer, kept,
            self.options.max_length_ratio,
        )  # fmt: skip
        if failed:
            reason, detail = failed[0]
            more = f" (and {', '.join(r for r, _ in failed[1:])})" if failed[1:] else ""
            self.refuse(c, language, reason, detail + more, raw)
            return
        self.methods[method.split(":", 1)[0]] += 1
        self.records.append(
            TranslationRecord(
                question_id=c.question_id, language=language, question=question, hint=hint,
                options=options, answer=c.answer, method=method, checks=list(checks.CHECKS),
                prompt_id=prompt_id, raw_output=raw,
            )
        )  # fmt: skip


def translate_all(
    run: RunFolder,
    options: TranslateOptions,
    models: dict[str, list[str]],
    gateway: Gateway | None = None,
) -> TranslateSummary:
    """The whole stage without Prefect."""
    done = {
        (r["question_id"], r["language"])
        for r in run.table(TranslationRecord).read(columns=["question_id", "language"]).to_pylist()
    }
    items = included(run, options)
    work = Translation(options)
    asked: list[tuple[CandidateRecord, str]] = []
    for language in options.languages:
        for c in items:
            if (c.question_id, language) in done:
                continue
            made = native.twin(c, language)
            if made is None:
                asked.append((c, language))
            else:
                work.offer(c, language, (made[0], None, made[1]), "template")
    masked = protect_models(models)
    translator = (masked.get("translator") or masked.get("generator") or [None])[0]
    untranslatable: list[str] = []  # what no template writes natively, with no model to translate
    if asked and translator is None:
        untranslatable = [c.question for c, _ in asked]
        for c, language in asked:
            work.refuse(
                c, language, "no_translator", "no template form; models.translator is not set"
            )
    elif asked:
        if gateway is None:
            from benchfoundry.gateway.assemble import gateway_for_run

            gateway = gateway_for_run(run.root, stage="translate")
        template = load("translate_item")
        requests = [
            Request(
                translator,
                template.render(
                    language_name=LANGUAGE_NAMES[language], question=c.question, hint=c.hint,
                    options=c.options,
                ),
                GenerateParams(json_schema=SCHEMA, max_tokens=800, prompt_version=template.prompt_id),
            )
            for c, language in asked
        ]  # fmt: skip
        for (c, language), reply in zip(asked, gateway.generate_many(requests), strict=True):
            if isinstance(reply, ModelCallError):
                work.refuse(c, language, "translator_failed", str(reply))
                continue
            try:
                written = _parse(reply.text, len(c.options))
            except ValueError as exc:
                work.refuse(c, language, "malformed_translation", str(exc), reply.text)
                continue
            work.offer(c, language, written, f"llm:{translator}", template.prompt_id, reply.text)
    added = run.table(TranslationRecord).append(work.records).added
    run.table(QuarantineRecord).append([r.to_record() for r in work.rejections])
    example = work.records[0] if work.records else None
    return TranslateSummary(
        run=str(run.root),
        languages=list(options.languages),
        items=len(items),
        twins_added=added,
        already_done=sum(
            1 for c in items for lang in options.languages if (c.question_id, lang) in done
        ),
        by_method=dict(sorted(work.methods.items())),
        refused_by_reason=dict(sorted(Counter(r.reason for r in work.rejections).items())),
        no_translator=len(untranslatable),
        no_translator_examples=list(dict.fromkeys(untranslatable))[:3],
        example=None
        if example is None
        else {
            "question_id": example.question_id,
            "question": example.question,
            "options": " / ".join(example.options),
        },
    )


def translate_job(
    run_root: str, options: TranslateOptions, models: dict[str, list[str]], catalogue: str | None
) -> TranslateSummary:
    """The stage's one job, in whichever process runs it: the gateway is built there when an
    item needs the translator."""
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.gateway.usage_summary import record_usage

    run_folder = RunFolder(run_root)
    gateway = gateway_for_run(run_folder.root, stage="translate", catalogue_path=catalogue)
    summary = translate_all(run_folder, options, models, gateway)
    record_usage(gateway, run_root)
    return summary


def run(stage: StageRun, mapper: Mapper = INLINE) -> TranslateSummary:
    """The whole stage: twins of the included items in each language (one job: the
    translator's calls inside it run concurrently through the gateway)."""
    args = (stage.run, stage.options.translate, stage.models, stage.catalogue)
    return next(mapper.map(translate_job, [(args, 1)], label="translate items"))
