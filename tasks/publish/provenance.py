"""What a release says of how it was built, read from the run: the build spec (local paths cut),
the sources and their folders, the extractors, the quality-control rules and ensembles, the review
decisions and agreement, and which models are the small offline ones."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchfoundry.core.records import ReviewRecord
from benchfoundry.decisions.status import review_status
from benchfoundry.decisions.suspects import FILE as SUSPECTS_FILE
from benchfoundry.decisions.suspects import since_analysis
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.card import EMBEDDED_PROVIDERS, CardInputs
from benchfoundry.tasks.publish.rows import ReleaseRow, short_path

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.tasks.publish.stage import Release


def code_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        text = version("benchfoundry")
    except PackageNotFoundError:
        text = "unknown"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{text}+{commit}" if commit else text


def spec_of(stage: StageRun, run: RunFolder) -> dict[str, Any]:
    """The build spec behind the release: the build's, as its manifest keeps it, else what this
    stage was given."""
    built = run.read_manifest().get("build", {}).get("spec")
    if built and (stage.name is None or built.get("name") == stage.name):
        return built
    return {
        "name": stage.name,
        "description": stage.description,
        "taxonomy": stage.taxonomy,
        "models": stage.models,
        "options": stage.options.model_dump(mode="json"),
    }


def portable(value: Any) -> Any:
    """The spec as a release shows it: absolute paths cut to their last parts (`short_path`),
    so that the folders of the machine that built it stay out."""
    if isinstance(value, dict):
        return {k: portable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [portable(v) for v in value]
    if isinstance(value, str) and value.startswith("/"):
        return short_path(value, keep=2)
    return value


def source_roots(sources: list[str]) -> list[Path]:
    """The folders the ingested sources read from (a folder, or a table file's folder)."""
    roots = []
    for text in sources:
        kind, _, rest = text.partition(":")
        if kind in {"folder", "videos"}:
            roots.append(Path(rest))
        elif kind in {"tsv", "parquet"}:
            roots.append(Path(rest).parent)
    return roots


def short_source(text: str) -> str:
    """A source as the card shows it: its kind and the end of its path (no local folders)."""
    kind, _, rest = text.partition(":")
    if kind in {"folder", "tsv", "parquet", "videos"}:
        return f"{kind}: {short_path(rest, keep=2)}"
    return text


def judged_by(run: RunFolder, question_ids: set[str]) -> dict[str, list[str]]:
    """The models that answered the released questions in each quality-control step, as the
    judgements table records them (`text_only`: the filter's, blind baselines included;
    `consensus`: with the image): the models that did the hit counting, the defaults the spec did
    not name included."""
    from benchfoundry.core.records import JudgementRecord

    table = run.table(JudgementRecord)
    if not table.count():
        return {}
    rows = table.read(columns=["question_id", "model", "mode"])
    judged: dict[str, set[str]] = {}
    columns = (rows.column(c).to_pylist() for c in ("question_id", "model", "mode"))
    for qid, model, mode in zip(*columns, strict=True):
        if qid in question_ids:
            judged.setdefault(mode, set()).add(model)
    return {mode: sorted(models) for mode, models in sorted(judged.items())}


def _models_line(judged: list[str] | None, named: list[str], blind: set[str] = frozenset()) -> str:
    """The models that answered (from the judgements), else those the spec named; none said so."""
    models = [m for m in (judged if judged is not None else named) if m not in blind]
    return ", ".join(models) or "none"


def qc_lines(manifest: dict[str, Any], judged: dict[str, list[str]] | None = None) -> list[str]:
    """The quality-control steps as the card tells them, naming the models that answered the
    released questions (`judged_by`), defaults included."""
    judged = judged or {}
    lines = []
    f = manifest.get("filter")
    if f:
        o = f["options"]
        blind = set(o["blind"]) | set(o.get("chance", []))
        lines.append(
            f"filter (no image): rules {', '.join(o['rules'])}; text-only models "
            f"{_models_line(judged.get('text_only'), f.get('models', {}).get('text_only', []), blind)}"
            f"; blind baselines {', '.join(o['blind']) or 'none'}; CircularEval "
            f"{'on' if o['circular'] else 'off'}"
        )
    c = manifest.get("consensus")
    if c:
        o = c["options"]
        bins = ", ".join(f"{k} <= {v}" for k, v in sorted(o["bins"].items(), key=lambda x: x[1]))
        lines.append(
            f"consensus (with the image): vision-language models "
            f"{_models_line(judged.get('consensus'), c.get('models', {}).get('vlm', []))}; CircularEval "
            f"{'on' if o['circular'] else 'off'}; difficulty bins by hit share: {bins}"
        )
    s = manifest.get("select")
    if s:
        o = s["options"]
        lines.append(
            f"select: hardest first, {o['target']} per dimension, at most "
            f"{o['max_per_image']} per image, letters balanced: {o['balance_letters']}"
        )
    return lines


def review_lines(run: RunFolder, rows: list[ReleaseRow]) -> list[str]:
    st = review_status(run)
    decided = Counter(r.review_decision for r in rows)
    lines = [
        f"{sum(r.human_reviewed for r in rows)} released questions decided by a person, "
        f"{sum(not r.human_reviewed for r in rows)} by the automatic reviewer only",
        "decisions that released a question: "
        + ", ".join(f"{k} {v}" for k, v in sorted(decided.items())),
        f"decisions by people: {st.decisions}; automatic: {st.auto_decisions}; conflicts open: "
        f"{len(st.conflicts)}",
    ]
    for pair in st.pairs:
        kappa = "-" if pair.kappa is None else f"{pair.kappa:.3f}"
        agree = "-" if pair.agreement is None else f"{pair.agreement:.1%}"
        lines.append(
            f"agreement {' / '.join(pair.reviewers)}: {pair.items} questions, {agree} the "
            f"same, Cohen's kappa {kappa}"
        )
    if st.alpha is not None:
        lines.append(
            f"Krippendorff's alpha over all reviewers: {st.alpha:.3f} ({st.alpha_items} questions)"
        )
    return lines + awaiting_lines(run)


def awaiting_lines(run: RunFolder) -> list[str]:
    """How many questions sent to review no one has decided yet (not in the release), and of
    them how many a check doubts: a flag from quality control (possibly flawed: the evidence
    reader read otherwise, or no model answered it; a text-only majority), which the automatic
    reviewer never accepts, so only a person can release them."""
    from benchfoundry.core.records import ReviewBatchRecord, ScoredRecord

    batches = run.table(ReviewBatchRecord)
    if not batches.exists():
        return []
    sent = {q for b in batches.records() for q in b.question_ids}
    decided = {r.question_id for r in run.table(ReviewRecord).records()}
    waiting = sent - decided
    if not waiting:
        return []
    scored = run.table(ScoredRecord)
    flags: Counter[str] = Counter()
    doubted = 0
    for record in scored.records() if scored.exists() else []:
        if record.question_id in waiting and record.flags:
            doubted += 1
            flags.update(record.flags)
    why = f" ({', '.join(f'{k} {v}' for k, v in sorted(flags.items()))})" if flags else ""
    return [
        f"{len(waiting)} questions sent to review await a person's decision and are not in "
        f"this release; {doubted} of them a check doubts{why}, which the automatic reviewer "
        "never accepts: people must still see them"
    ]


def suspect_lines(run: RunFolder) -> list[str]:
    """What became of the items the last item analysis (RUN/reports/items.parquet, written by
    `benchfoundry report`) found suspect: for the next release's card."""
    path = Path(str(run.root)) / "reports" / SUSPECTS_FILE
    return since_analysis(path, run.table(ReviewRecord).records()) if path.is_file() else []


def extractors(run: RunFolder, image_ids: set[str]) -> dict[str, int]:
    from benchfoundry.core.records import VisualFactsRecord

    table = run.table(VisualFactsRecord)
    if not table.exists():
        return {}
    found: Counter[str] = Counter()
    data = table.read(columns=["image_id", "extractors"]).to_pylist()
    for row in data:
        if row["image_id"] in image_ids:
            for e in row["extractors"]:
                model = f" {short_path(e['model'])}" if e.get("model") else ""
                found[f"{e['role']}: {e['backend']}{model} {e['version']}"] += 1
    return dict(found)


def tiny_models(spec: dict[str, Any]) -> list[str]:
    from benchfoundry.gateway.assemble import default_catalogue
    from benchfoundry.gateway.models import resolve

    catalogue = default_catalogue(spec.get("model_catalogue"))
    names = {m for models in (spec.get("models") or {}).values() for m in models}
    tiny = set()
    for name in names:
        try:
            if resolve(name, catalogue).provider in EMBEDDED_PROVIDERS:
                tiny.add(name)
        except ValueError:
            continue
    return sorted(tiny)


def card_inputs(release: Release, data: list[Path]) -> CardInputs:
    """What the dataset card says of a release and how it was built, read from its run."""
    options, run = release.stage.options.publish, release.run
    manifest = run.read_manifest()
    return CardInputs(
        name=release.name,
        pretty_name=options.pretty_name or release.name,
        description=release.spec.get("description") or release.stage.description,
        version=release.version,
        code_version=code_version(),
        license=options.license,
        sources=[short_source(s) for s in manifest.get("ingest", {}).get("sources", [])],
        extractors=extractors(run, {r.image_id for r in release.rows}),
        qc=qc_lines(manifest, judged_by(run, {r.question_id for r in release.rows})),
        review=review_lines(run, release.rows) + suspect_lines(run),
        tiny_models=tiny_models(release.spec),
        allow_unreviewed=options.allow_unreviewed,
        num_bytes=sum(p.stat().st_size for p in data),
        tsv_differences=len(release.tsv_differences),
        languages=dict(sorted(Counter(t.language for t in release.twins).items())),
        languages_by_people=dict(
            Counter(t.language for t in release.twins if t.human_reviewed).items()
        ),
        results=release.results,
    )
