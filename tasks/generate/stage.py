"""The generate stage: candidates from the template generator and, when generator models are
configured, from LLMs per evaluation dimension; every draft validated, near duplicates merged,
answer letters spread evenly, and every refusal quarantined with its reason."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.letters import index_of
from benchfoundry.core.reasons import Rejection
from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    NotAskedRecord,
    QuarantineRecord,
    SegmentRecord,
    VisualFactsRecord,
)
from benchfoundry.core.taxonomy import DEFAULT_TAXONOMY, Taxonomy, TaxonomyError, load_taxonomy
from benchfoundry.core.video import KEYFRAME
from benchfoundry.gateway import Gateway
from benchfoundry.gateway.blind import embed
from benchfoundry.gateway.models import protect_models
from benchfoundry.storage.refusals import candidate_ref
from benchfoundry.storage.refusals import refused_candidates as refused
from benchfoundry.storage.tables import RunFolder
from benchfoundry.storage.visual_context import current_facts, motion_by_frame
from benchfoundry.tasks.generate.drafts import (
    Draft,
    Rules,
    letter_distribution,
    merge_near_duplicates,
    to_candidate,
    validate,
)
from benchfoundry.tasks.generate.llm import Job, llm_drafts
from benchfoundry.tasks.generate.options import GenerateOptions
from benchfoundry.tasks.generate.summary import GenerateSummary
from benchfoundry.tasks.generate.template_questions import template_drafts
from benchfoundry.tasks.generate.templates_temporal import temporal_drafts
from benchfoundry.tasks.generate.temporal_llm import with_llm_distractors

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


def facts_by_image(run: RunFolder) -> list[VisualFactsRecord]:
    """One facts record per picture (those of the latest extract's configuration), by image.
    A clip's keyframes are not pictures to ask about one by one: their segments are."""
    table = run.table(ImageRecord).read(columns=["image_id", "source_kind"])
    frames = {r["image_id"] for r in table.to_pylist() if r["source_kind"] == KEYFRAME}
    facts = current_facts(run).values()
    return sorted((f for f in facts if f.image_id not in frames), key=lambda r: r.image_id)


def cost_by_dimension(drafts: list[Draft]) -> dict[str, float]:
    """What writing the drafts cost, kept or refused, per dimension."""
    totals: dict[str, float] = {}
    for draft in drafts:
        totals[draft.dimension] = totals.get(draft.dimension, 0.0) + draft.cost
    return totals


def image_sizes(run: RunFolder) -> dict[str, tuple[float, float]]:
    table = run.table(ImageRecord).read(columns=["image_id", "width", "height"])
    return {r["image_id"]: (float(r["width"]), float(r["height"])) for r in table.to_pylist()}


def _has(facts: VisualFactsRecord, needs: tuple[str, ...]) -> bool:
    return all(getattr(facts, need) for need in needs)


def llm_jobs(
    facts: list[VisualFactsRecord],
    taxonomy: Taxonomy,
    models: dict[str, list[str]],
    options: GenerateOptions,
) -> list[Job]:
    """A job per image and dimension whose needs the facts meet, for the role's first model."""
    if not options.llm:
        return []
    leaves = {d.id for d in taxonomy.leaves()}
    unknown = sorted(set(options.llm_dimensions or []) - leaves)
    if unknown:
        raise TaxonomyError(
            f"llm_dimensions {unknown} are not leaves of taxonomy '{taxonomy.name}'"
        )
    wanted = set(options.llm_dimensions or leaves)
    jobs = []
    for dimension in taxonomy.leaves():
        if dimension.id not in wanted or dimension.prompt is None:
            continue
        masked = protect_models(models)  # a credential never reaches the candidates' generator
        role_models = masked.get(dimension.role) or masked.get("generator") or []
        if not role_models:
            continue
        jobs += [Job(f, dimension, role_models[0]) for f in facts if _has(f, dimension.needs)]
    return jobs


def generate_all(
    run: RunFolder,
    options: GenerateOptions,
    taxonomy_name: str | None,
    models: dict[str, list[str]],
    gateway: Gateway | None = None,
) -> GenerateSummary:
    """The whole stage without Prefect."""
    taxonomy = load_taxonomy(taxonomy_name or DEFAULT_TAXONOMY)
    facts = facts_by_image(run)
    drafts: list[Draft] = []
    rejections: list[Rejection] = []
    not_asked: Counter[tuple[str, str]] = Counter()
    per_image: list[tuple[str, str, str, str]] = []  # image, dimension, template, reason
    if options.templates:
        pool = sorted({line.text for f in facts for line in f.ocr_lines})
        sizes = image_sizes(run)
        for record in facts:
            made = template_drafts(record, taxonomy, pool, options.seed, sizes.get(record.image_id))
            drafts += made.drafts
            not_asked.update(made.not_asked.items())
            per_image += why_not(record.image_id, taxonomy, made.kinds)
        per_image += unread_pictures(run, {f.image_id for f in facts}, taxonomy)
    outcomes: Counter[tuple[str, str]] = Counter()
    if options.templates:
        segments = run.table(SegmentRecord).records()
        made = temporal_drafts(segments, taxonomy, options.seed, embed, options.n_options)
        not_asked.update(made.not_asked)
        writer = (protect_models(models).get("generator") or [None])[0] if options.llm else None
        if writer and made.drafts:
            if gateway is None:
                from benchfoundry.gateway.assemble import gateway_for_run

                gateway = gateway_for_run(run.root, stage="generate")
            made.drafts, outcomes = with_llm_distractors(
                gateway, made.drafts, writer, annotation_sets(segments), motion_by_frame(run)
            )
        drafts += made.drafts
    jobs = llm_jobs(facts, taxonomy, models, options)
    if jobs:
        if gateway is None:
            from benchfoundry.gateway.assemble import gateway_for_run

            gateway = gateway_for_run(run.root, stage="generate")
        names = {d.id: d.name for d in taxonomy.dimensions}
        written, refused = llm_drafts(
            gateway, jobs, names, options.n_options, options.context_max_chars
        )
        drafts += written
        rejections += refused
    seed_refusals = check_seeds(run, taxonomy, options)
    requested = Counter(j.dimension.id for j in jobs)
    summary = finish(
        run, drafts, rejections, taxonomy, options, requested, gateway, seed_refusals, not_asked
    )
    if options.templates:
        summary.images_without_questions, summary.commonest_why_not = store_why_not(run, per_image)
    for (dimension, outcome), n in outcomes.items():  # where the distractors came from
        summary.per_dimension.setdefault(dimension, {})[outcome] = n
    return summary


def why_not(image: str, taxonomy: Taxonomy, kinds: dict) -> list[tuple[str, str, str, str]]:
    """(image, dimension, template, reason) for every template kind of a dimension that asked
    this picture nothing, with the kind's own reason."""
    rows = []
    for dimension in taxonomy.leaves():
        if "segments" in dimension.needs:
            continue  # a clip's segments are asked, not pictures
        for kind in dimension.templates:
            asked = kinds.get(kind)
            if asked is not None and not asked.questions and asked.why_not:
                rows.append((image, dimension.id, kind, asked.why_not))
    return rows


def unread_pictures(
    run: RunFolder, read: set[str], taxonomy: Taxonomy
) -> list[tuple[str, str, str, str]]:
    """A row for each stored picture (not a clip's keyframe) that has no facts to ask from:
    extract refused it or has not run on it."""
    table = run.table(ImageRecord).read(columns=["image_id", "source_kind"])
    pictures = {r["image_id"] for r in table.to_pylist() if r["source_kind"] != KEYFRAME}
    return [(i, "*", "*", "no_facts") for i in sorted(pictures - read)]


def store_why_not(
    run: RunFolder, rows: list[tuple[str, str, str, str]], n_reasons: int = 5
) -> tuple[int, list[dict]]:
    """Write the `not_asked` table (each picture's origin named) and say, of the pictures that
    got no question at all, how many there are and the commonest reasons (with up to three
    files each)."""
    sources = run.table(ImageRecord).read(columns=["image_id", "source"]).to_pylist()
    source_of = {r["image_id"]: r["source"] for r in sources}
    run.table(NotAskedRecord).append(
        [
            NotAskedRecord(
                image_id=image,
                source=source_of.get(image, ""),
                dimension=dim,
                template=kind,
                reason=reason,
            )  # fmt: skip
            for image, dim, kind, reason in rows
        ]
    )
    asked = set(run.table(CandidateRecord).read(columns=["image_id"]).column(0).to_pylist())
    bare = {image for image, *_ in rows} - asked
    reasons: dict[str, list[str]] = {}
    for image, _, _, reason in sorted(rows):
        if image in bare and image not in reasons.setdefault(reason, []):
            reasons[reason].append(image)
    top = sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:n_reasons]
    return len(bare), [
        {
            "reason": reason,
            "images": len(images),
            "examples": [source_of.get(i, i).rsplit("/", 1)[-1] for i in images[:3]],
        }
        for reason, images in top
    ]


def annotation_sets(segments: list[SegmentRecord]) -> dict[str, list[str]]:
    """For each clip, the labels of its annotation set (the style its distractors follow)."""
    by_kind: dict[str, list[str]] = {}
    for s in segments:
        by_kind.setdefault(s.source_kind, []).append(s.label)
    return {s.clip_id: sorted(set(by_kind[s.source_kind])) for s in segments}


def check_seeds(run: RunFolder, taxonomy: Taxonomy, options: GenerateOptions) -> list[Rejection]:
    """Seed questions from ingested benchmarks pass the same validation. A refused seed stays in
    `candidates` (rows are never rewritten) and gets a quarantine row `candidate:<question_id>`,
    which later stages honour through `refused_candidates`."""
    rules = Rules(
        options.min_options, options.max_options, options.length_ratio, options.near_duplicate
    )
    dimensions = {d.id for d in taxonomy.leaves()}
    refusals = []
    for seed in run.table(CandidateRecord).records():
        if not seed.generator.startswith("seed:"):
            continue
        index = index_of(seed.answer)
        draft = Draft(
            image_id=seed.image_id,
            dimension=seed.dimension,
            question=seed.question,
            correct=seed.options[index],
            distractors=[o for k, o in enumerate(seed.options) if k != index],
            generator=seed.generator,
        )
        refusal = validate(draft, rules, dimensions)
        if refusal is None:
            continue
        hint = (
            "; map its category with options.ingest.dimension_map"
            if refusal.reason == "unknown_dimension"
            else ""
        )
        refusals.append(
            Rejection(
                source_kind=seed.generator,
                reason=refusal.reason,
                detail=f"{refusal.detail} (seed from {seed.source}{hint})",
                stage="generate",
                **candidate_ref(seed.question_id, seed.dimension),
            )
        )
    return refusals


def refused_candidates(run: RunFolder) -> set[str]:
    """Question ids of stored candidates that the generate stage refused (seed questions)."""
    return set(refused(run))


def finish(
    run: RunFolder,
    drafts: list[Draft],
    rejections: list[Rejection],
    taxonomy: Taxonomy,
    options: GenerateOptions,
    requested: Counter[str],
    gateway: Gateway | None,
    seed_refusals: list[Rejection] | None = None,
    not_asked: Counter[tuple[str, str]] | None = None,
) -> GenerateSummary:
    """Validate, merge and store the drafts; count what happened per dimension, including the
    images whose facts could not support a dimension's templates (`not_asked:<reason>`)."""
    rules = Rules(
        options.min_options, options.max_options, options.length_ratio, options.near_duplicate
    )
    dimensions = {d.id for d in taxonomy.leaves()}
    valid = []
    for draft in drafts:
        refusal = validate(draft, rules, dimensions)
        (rejections.append(refusal) if refusal else valid.append(draft))
    kept, merged = merge_near_duplicates(valid, rules.near_duplicate)
    rejections += merged
    candidates = [to_candidate(d, options.seed, rules) for d in kept]
    written = run.table(CandidateRecord).append(candidates)
    seed_refusals = seed_refusals or []
    run.table(QuarantineRecord).append([r.to_record() for r in rejections + seed_refusals])
    per_dimension: dict[str, dict[str, int]] = {}
    for draft in drafts:
        per_dimension.setdefault(draft.dimension, Counter())["drafted"] += 1
    for dimension, n in requested.items():
        per_dimension.setdefault(dimension, Counter())["llm_requested"] += n
    for candidate in candidates:
        per_dimension.setdefault(candidate.dimension, Counter())["produced"] += 1
    for refusal in rejections:
        dimension = refusal.dimension or "unknown"
        per_dimension.setdefault(dimension, Counter())[f"refused:{refusal.reason}"] += 1
    unsupported: dict[str, dict[str, int]] = {}
    for (dimension, reason), n in sorted((not_asked or Counter()).items()):
        per_dimension.setdefault(dimension, Counter())[f"not_asked:{reason}"] += n
        unsupported.setdefault(dimension, {})[reason] = n
    return GenerateSummary(
        run=str(run.root),
        taxonomy=taxonomy.name,
        images=len({d.image_id for d in drafts}),
        drafts=len(drafts),
        candidates=len(candidates),
        candidates_added=written.added,
        refused_by_reason=dict(sorted(Counter(r.reason for r in rejections).items())),
        by_generator=dict(sorted(Counter(c.generator for c in candidates).items())),
        per_dimension={k: dict(sorted(v.items())) for k, v in sorted(per_dimension.items())},
        letter_distribution=letter_distribution(candidates),
        flagged_length_outliers=sum("length_outlier" in c.flags for c in candidates),
        cost=round(sum(d.cost for d in drafts), 6),
        cost_by_dimension={k: round(v, 6) for k, v in sorted(cost_by_dimension(drafts).items())},
        letters_by_option_count={
            str(n): letter_distribution([c for c in candidates if len(c.options) == n])
            for n in sorted({len(c.options) for c in candidates})
        },
        seeds_refused_by_reason=dict(sorted(Counter(r.reason for r in seed_refusals).items())),
        not_asked=unsupported,
    )


def generate_job(
    run_root: str,
    options: GenerateOptions,
    taxonomy: str | None,
    models: dict[str, list[str]],
    catalogue: str | None = None,
) -> GenerateSummary:
    """The stage's one job, in whichever process runs it: the gateway is built there."""
    from benchfoundry.gateway.assemble import gateway_for_run
    from benchfoundry.gateway.usage_summary import record_usage

    run_folder = RunFolder(run_root)
    gateway = gateway_for_run(run_folder.root, stage="generate", catalogue_path=catalogue)
    summary = generate_all(run_folder, options, taxonomy, models, gateway)
    record_usage(gateway, run_root)
    return summary


def run(stage: StageRun, mapper: Mapper = INLINE) -> GenerateSummary:
    """The whole stage: candidate questions for every image with visual facts (one job: the
    LLM calls inside it run concurrently through the gateway)."""
    args = (stage.run, stage.options.generate, stage.taxonomy, stage.models, stage.catalogue)
    return next(mapper.map(generate_job, [(args, 1)], label="generate candidates"))
