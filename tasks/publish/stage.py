"""The publish stage: the candidates that review accepted become an immutable, versioned release
outside the run folder, `<to>/<name>/<version>/` (Parquet shards loadable with `datasets`, a
dataset card, VLMEvalKit's TSV, a manifest), once the publish gate (`validation/gate.py`) has
passed on the release table. The version is a hash of the release's content: publishing the same
decisions again writes nothing. A release is written under a hidden temporary name and renamed
into place, so a crash leaves no half release and `latest` still names the previous one."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.crash_points import crash_point
from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import content_hash
from benchfoundry.core.locations import is_url
from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    ReviewBatchRecord,
    ReviewRecord,
    ScoredRecord,
    TranslationRecord,
)
from benchfoundry.core.taxonomy import DEFAULT_TAXONOMY, Taxonomy, load_taxonomy
from benchfoundry.decisions.store import snapshot_run
from benchfoundry.explorer.release_data import write_release_explorer
from benchfoundry.storage import releases
from benchfoundry.storage.atomic import atomic_write_json
from benchfoundry.storage.objects import Lease, Store
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.card import write_card
from benchfoundry.tasks.publish.clips import cut_clips, with_cuts
from benchfoundry.tasks.publish.files import (
    copy_frames,
    spool_images,
    tsv_differences,
    tsv_name,
    write_parquet,
    write_tsv,
)
from benchfoundry.tasks.publish.lmms_eval_tasks import write_lmms_eval_tasks
from benchfoundry.tasks.publish.placing import TMP_PREFIX, clean_stale, fsync_tree, locked
from benchfoundry.tasks.publish.provenance import (
    card_inputs,
    portable,
    source_roots,
    spec_of,
)
from benchfoundry.tasks.publish.results import evaluation_of, results_lines
from benchfoundry.tasks.publish.rows import (
    ImageInfo,
    ReleaseRow,
    Selection,
    frame_ids,
    select,
    twin_rows,
)
from benchfoundry.tasks.publish.summary import PublishSummary
from benchfoundry.validation.gate import GateResult, GateRow, run_gate

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun

RELEASE_LEASE = ".lock.json"  # one publish at a time per release name at a URL
Changes = dict[str, list[str]]  # added, removed, changed: question ids


class PublishError(UserError, ValueError):
    """A release that cannot be made: the message says why; nothing was published."""


class GateFailed(PublishError):
    def __init__(self, gate: GateResult) -> None:
        failed = gate.failures()
        super().__init__(
            f"the publish gate refused the release: {len(failed)} of {len(gate.checks)} "
            f"expectations failed (Data Docs: {gate.data_docs})\n{gate.message()}"
        )
        self.gate = gate


# --- the release ------------------------------------------------------------------------------


def _selection(run: RunFolder, taxonomy_name: str, include_auto: bool) -> Selection:
    images = {
        row["image_id"]: ImageInfo(**{k: row[k] for k in ("source", "format", "license")})
        for row in run.table(ImageRecord)
        .read(columns=["image_id", "source", "format", "license"])
        .to_pylist()
    }
    return select(
        run.table(CandidateRecord).records(),
        {s.question_id: s for s in run.table(ScoredRecord).records()},
        run.table(ReviewRecord).records(),
        images,
        load_taxonomy(taxonomy_name),
        include_auto,
        {q for b in run.table(ReviewBatchRecord).records() for q in b.question_ids},
        source_roots(run.read_manifest().get("ingest", {}).get("sources", [])),
    )


@dataclass
class Release:
    """One publish under way: what it releases, where, and the gate's verdict."""

    run: RunFolder
    stage: StageRun
    spec: dict[str, Any]
    name: str
    taxonomy: Taxonomy
    selection: Selection
    version: str
    folder: Path  # <to>/<name>
    gate: GateResult | None = None
    tsv_differences: list[str] = field(default_factory=list)
    twins: list[ReleaseRow] = field(default_factory=list)  # the rows in other languages
    results: list[str] = field(default_factory=list)  # the card's evaluation results (lines)
    base_version: str | None = None  # with results: the version of the same rows without
    cuts: Path | None = None  # the clip questions' stretches, cut (`videos/`), until written

    @property
    def all_rows(self) -> list[ReleaseRow]:
        return self.selection.rows + self.twins

    @property
    def rows(self) -> list[ReleaseRow]:
        return self.selection.rows

    @property
    def final(self) -> Path:
        return self.folder / self.version


def prepare(stage: StageRun) -> Release:
    """What the run's decisions release, and its version; an error when that is nothing."""
    run = RunFolder(stage.run)
    options = stage.options.publish
    spec = spec_of(stage, run)
    name = stage.name or spec.get("name") or run.root.name
    taxonomy_name = stage.taxonomy or spec.get("taxonomy") or DEFAULT_TAXONOMY
    # The decisions as they stand now, from the review database (one made while this runs
    # goes into the next version).
    snapshot_run(run, stage.options.review.database)
    selection = _selection(run, taxonomy_name, options.allow_unreviewed)
    if selection.missing_images:
        raise PublishError(
            f"{len(selection.missing_images)} accepted questions have no image in the run: "
            + ", ".join(selection.missing_images[:10])
        )
    if not selection.rows:
        why = ", ".join(f"{v} {k}" for k, v in selection.left_out.items()) or "no candidates"
        raise PublishError(f"nothing to publish: no question was accepted in review ({why})")
    folder = releases.local_folder(options.to, name)
    with _removed_on_error(_cut_stretches(run, selection, folder)) as cuts:
        twins, twins_left = twin_rows(
            selection.rows,
            run.table(TranslationRecord).records(),
            {c.question_id: c for c in run.table(CandidateRecord).records()},
            run.table(ReviewRecord).records(),
            options.allow_unreviewed,
        )
        for reason, n in twins_left.items():
            selection.left_out[f"twin {reason}"] = n
        shaping = options.model_dump(
            mode="json", include={"rows_per_file", "row_group_rows", "license", "pretty_name"}
        )
        version = content_hash(
            [name, shaping, spec.get("description") or stage.description]
            + [r.model_dump(mode="json") for r in selection.rows + twins],
            length=12,
        )
        base, results = version, []
        if options.card_results and (found := evaluation_of(run, version, folder)) is not None:
            results = results_lines(found)
            version = content_hash([base, results], length=12)
        return Release(
            run=run,
            stage=stage,
            spec=spec,
            name=name,
            taxonomy=load_taxonomy(taxonomy_name),
            selection=selection,
            version=version,
            folder=folder,
            twins=twins,
            results=results,
            base_version=base if results else None,
            cuts=cuts,
        )


@contextlib.contextmanager
def _removed_on_error(folder: Path | None) -> Iterator[Path | None]:
    """`folder`, removed when what uses it fails (otherwise the publish removes it at its end)."""
    try:
        yield folder
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _cut_stretches(run: RunFolder, selection: Selection, folder: Path) -> Path | None:
    """Each clip question's stretch cut into a file of its own, in a hidden folder beside the
    releases (gone when the publish ends), and the rows set to name it; before the version is
    computed, so the version covers the files' content hashes."""
    if not any(r.clip_id for r in selection.rows):
        return None
    folder.mkdir(parents=True, exist_ok=True)
    # `.tmp-cuts-<random>-<pid>`: a publish that dies leaves it to `clean_stale`
    cuts = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}cuts-", suffix=f"-{os.getpid()}", dir=folder))
    with _removed_on_error(cuts):
        made = cut_clips(run, selection.rows, cuts)
        if failed := {k: c.problem for k, c in made.items() if c.problem}:
            named = "; ".join(
                f"clip {clip} {start:g}-{end:g} s: {why}"
                for (clip, start, end), why in sorted(failed.items())[:5]
            )
            raise PublishError(
                f"{len(failed)} clip stretch(es) of the release could not be cut ({named}); "
                "nothing was published"
            )
        selection.rows = with_cuts(selection.rows, made)
    return cuts


def check(release: Release, spool: Path) -> GateResult:
    """The publish gate on the release rows (images read into `spool` and decoded there)."""
    options = release.stage.options.publish
    rows = release.all_rows
    wanted = {r.image_id for r in rows} | frame_ids(rows)
    decoded = spool_images(release.run, wanted, spool)
    taxonomy = release.taxonomy
    return run_gate(
        [
            GateRow(
                **r.model_dump(include=set(GateRow.model_fields) - {"image_decodes"}),
                image_decodes=decoded.get(r.image_id) is None,
                # a clip question's stretch was cut and its cut decodes (`clips.py`), and so
                # does each of its keyframes
                video_decodes=r.clip_id is None
                or (
                    r.video is not None
                    and all(decoded.get(Path(f).stem, "absent") is None for f in r.video_frames)
                ),
            )
            for r in rows
        ],
        dimensions=["/".join(taxonomy.path(d.id)) for d in taxonomy.leaves()],
        docs=release.run.root / "reports" / "data_docs",
        letter_tolerance=options.letter_tolerance,
        longest_answer_share=options.longest_answer_share,
        allow_unreviewed=options.allow_unreviewed,
        name=release.name,
    )


def write(release: Release, tmp: Path, spool: Path, parent: str | None, changes: Changes) -> None:
    """Every file of the release into `tmp`, the manifest last."""
    options, rows = release.stage.options.publish, release.rows
    data = write_parquet(rows, spool, tmp / "data", options.rows_per_file, options.row_group_rows)
    if release.cuts is not None and (release.cuts / "videos").is_dir():  # the stretches' files
        shutil.move(release.cuts / "videos", tmp / "videos")
    copy_frames(rows, spool, tmp)  # the keyframes the gate decoded, beside the data
    languages = sorted({t.language for t in release.twins})
    for language in languages:  # a config per language: data/<language>/test-*.parquet
        of = [t for t in release.twins if t.language == language]
        data += write_parquet(
            of, spool, tmp / "data" / language, options.rows_per_file, options.row_group_rows
        )
    crash_point("publish.after_data")
    # VLMEvalKit names a bilingual set's files by language (MMBench_DEV_EN, MMBench_DEV_CN).
    for language in ["en", *languages]:
        of = rows if language == "en" else [t for t in release.twins if t.language == language]
        tsv = tmp / tsv_name(release.name, language, bool(languages))
        write_tsv(of, spool, tsv)
        try:
            release.tsv_differences += tsv_differences(of, tsv)
        except ValueError as exc:
            raise PublishError(f"the VLMEvalKit TSV {tsv.name} is broken: {exc}") from None
    write_lmms_eval_tasks(tmp, release.name, release.version, languages)
    shutil.rmtree(spool)
    inputs = card_inputs(release, data)
    write_card(rows, inputs, release.taxonomy, tmp)
    write_release_explorer(tmp, release.run, name=release.name, version=release.version)
    files = {
        str(p.relative_to(tmp)): {"sha256": releases.file_sha256(p), "bytes": p.stat().st_size}
        for p in sorted(tmp.rglob("*"))
        if p.is_file()
    }
    gate = release.gate
    assert gate is not None
    atomic_write_json(
        tmp / releases.MANIFEST,
        {
            "name": release.name,
            "version": release.version,
            "created_at": datetime.now(UTC).isoformat(timespec="microseconds"),
            "parent": parent,
            "base_version": release.base_version,  # with card results: the same rows' version
            "rows": len(rows),
            "images": len({r.image_id for r in rows}),
            "videos": len({r.video for r in rows if r.video}),
            "languages": {"en": len(rows)}
            | {lang: sum(t.language == lang for t in release.twins) for lang in languages},
            "files": files,
            "spec": portable(release.spec),
            "spec_hash": content_hash(release.spec, length=16),
            "code_version": inputs.code_version,
            "changes": changes,
            "tsv_differences": release.tsv_differences,
            "review": {
                "human_reviewed": sum(r.human_reviewed for r in rows),
                "auto_only": sum(not r.human_reviewed for r in rows),
                "allow_unreviewed": options.allow_unreviewed,
                "left_out": release.selection.left_out,
            },
            "gate": {
                "success": gate.success,
                "expectations": len(gate.checks),
                "skipped": gate.skipped,
            },
        },
    )


def publish_release(stage: StageRun) -> PublishSummary:
    """The stage's one job: select, gate, write under a hidden name, rename, point `latest`.
    To a URL: the same in the name's local mirror, under the name's lease, then put (new
    version's files, its manifest created only if absent, then `latest`)."""
    shutil.rmtree(Path(stage.run) / "reports" / "data_docs", ignore_errors=True)  # this run's only
    release = prepare(stage)
    try:
        return _publish_prepared(release)
    finally:
        if release.cuts is not None:
            shutil.rmtree(release.cuts, ignore_errors=True)


def _publish_prepared(release: Release) -> PublishSummary:
    stage = release.stage
    to = stage.options.publish.to
    if not is_url(to):
        return _publish_locally(release)
    url = f"{str(to).rstrip('/')}/{release.name}"
    store = Store(url)
    lease = Lease(store, RELEASE_LEASE)
    with lease.held(wait_s=600):  # publishes of one name take turns
        releases.pull_for_publish(store, release.folder, release.version)
        summary = _publish_locally(release)
        releases.push_published(store, release.folder, lease)
    final = f"{url}/{release.version}"
    return summary.model_copy(
        update={
            "release": final,
            "load": summary.load.replace(str(release.final), final),
        }
    )


def _publish_locally(release: Release) -> PublishSummary:
    folder = release.folder
    folder.mkdir(parents=True, exist_ok=True)
    with locked(folder):
        clean_stale(folder)
        tmp = folder / f"{TMP_PREFIX}{release.version}-{os.getpid()}"
        try:
            return _publish(release, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _publish(release: Release, tmp: Path) -> PublishSummary:
    folder = release.folder
    release.gate = check(release, tmp / ".images")
    if not release.gate.success:
        raise GateFailed(release.gate)
    if release.final.exists():
        return _already(release)
    parent = releases.read_latest(folder)
    new = {r.question_id: r.digest() for r in release.rows}
    changes = (
        releases.changes(releases.digests(folder / parent), new)
        if parent and (folder / parent).is_dir()
        else releases.changes({}, new)
    )
    write(release, tmp, tmp / ".images", parent, changes)
    fsync_tree(tmp)
    os.rename(tmp, release.final)
    crash_point("publish.before_latest")
    releases.write_latest(folder, release.version)
    return _summary(release, True, parent, changes)


def _already(release: Release) -> PublishSummary:
    """This content is published as its version already: nothing is written; a folder of that
    version whose files no longer match its manifest is refused, never rewritten."""
    problems = releases.verify(release.final)
    manifest = releases.read_manifest(release.final)
    if problems or manifest.get("rows") != len(release.rows):
        raise PublishError(
            f"version {release.version} already exists in {release.folder} with other content "
            f"({'; '.join(problems) or 'another row count'}): a published version is never "
            "rewritten; remove that folder by hand if it is damaged"
        )
    _repair_latest(release, manifest)
    return _summary(release, False, manifest.get("parent"), manifest.get("changes", {}))


def _repair_latest(release: Release, manifest: dict[str, Any]) -> None:
    """A publish that died between its rename and `latest` left `latest` on an older version
    (or none): point it at this one when this one is newer. Republishing the content of an
    older version leaves `latest` where it is."""
    current = releases.read_latest(release.folder)
    if current == release.version:
        return
    if current is not None and (release.folder / current).is_dir():
        newest = releases.read_manifest(release.folder / current).get("created_at", "")
        if newest >= manifest.get("created_at", ""):
            return
    releases.write_latest(release.folder, release.version)


def _summary(
    release: Release, written: bool, parent: str | None, changes: Changes
) -> PublishSummary:
    rows, gate = release.rows, release.gate
    assert gate is not None
    return PublishSummary(
        run=str(release.run.root),
        name=release.name,
        version=release.version,
        release=str(release.final),
        written=written,
        latest=releases.read_latest(release.folder),
        parent=parent,
        rows=len(rows),
        images=len({r.image_id for r in rows}),
        per_dimension=dict(sorted(Counter(r.dimension for r in rows).items())),
        human_reviewed=sum(r.human_reviewed for r in rows),
        auto_only=sum(not r.human_reviewed for r in rows),
        left_out=release.selection.left_out,
        changes=releases.change_counts(changes),
        tsv_differences=release.tsv_differences
        or releases.read_manifest(release.final).get("tsv_differences", []),
        gate=gate,
        files=sorted(releases.read_manifest(release.final).get("files", {})),
        load=(
            "from datasets import load_dataset; ds = load_dataset('parquet', data_files="
            f"'{release.final}/data/*.parquet', split='train')"
        ),
    )


def run(stage: StageRun, mapper: Mapper = INLINE) -> PublishSummary:
    """The whole stage (one job: a release is written by one process)."""
    return next(mapper.map(publish_release, [((stage,), 1)], label="publish"))
