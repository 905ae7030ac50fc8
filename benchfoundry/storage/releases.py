"""Published releases: `<to>/<name>/<version>/{data/*.parquet, README.md, <name>.tsv,
manifest.json}` and `<to>/<name>/latest`, a small file naming the newest version (a file, not
a symlink, so it works on object stores too). A version is a content hash and is never rewritten;
release folders being written are hidden (`.tmp-*`) until they are renamed into place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel

from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import content_hash
from benchfoundry.storage.atomic import atomic_write_bytes
from benchfoundry.storage.objects import sha256_file

LATEST = "latest"
MANIFEST = "manifest.json"
CONTENT_COLUMNS = ("question_id", "image_id", "question", "hint", "options", "answer", "dimension")


class ReleaseError(UserError, ValueError):
    """A release folder that cannot be read, or a write that would rewrite a published version."""


class ReleaseInfo(BaseModel):
    name: str
    version: str
    path: str
    created_at: str
    rows: int
    parent: str | None
    changes: dict[str, int]  # added, removed, changed against the parent
    latest: bool
    human_reviewed: int
    auto_accepted: int


file_sha256 = sha256_file  # a release's manifest hashes its files the way commits do


def read_latest(folder: Path) -> str | None:
    """The version `folder/latest` names, if any."""
    pointer = folder / LATEST
    if not pointer.is_file():
        return None
    text = pointer.read_text(encoding="utf-8").strip()
    return text or None


def write_latest(folder: Path, version: str) -> None:
    atomic_write_bytes(folder / LATEST, (version + "\n").encode("utf-8"))


def read_manifest(version_dir: Path) -> dict[str, Any]:
    path = version_dir / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"release {version_dir} has no readable {MANIFEST}: {exc}") from None


def release_at(path: Path) -> Path | None:
    """The published release `path` is, or lies in (a version folder, or a name's folder with
    its `latest` pointer), else None: a run folder's own manifest names no files."""
    for p in [path, *path.resolve().parents]:
        manifest = p / MANIFEST
        if manifest.is_file():
            try:
                found = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(found, dict) and "files" in found and "version" in found:
                return p
        if (version := read_latest(p)) is not None and (p / version / MANIFEST).is_file():
            return p
    return None


def verify(version_dir: Path) -> list[str]:
    """The files of a published version that differ from its manifest (empty: intact)."""
    manifest = read_manifest(version_dir)
    problems = []
    for name, entry in sorted(manifest.get("files", {}).items()):
        path = version_dir / name
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif file_sha256(path) != entry["sha256"]:
            problems.append(f"{name} differs from its hash in the manifest")
    return problems


def data_files(version_dir: Path) -> list[Path]:
    return sorted((version_dir / "data").glob("test-*.parquet"))


def language_files(version_dir: Path) -> dict[str, list[Path]]:
    """A bilingual release's twins: language -> its `data/<language>/test-*.parquet` files."""
    folder = version_dir / "data"
    return {
        d.name: sorted(d.glob("test-*.parquet"))
        for d in sorted(folder.iterdir() if folder.is_dir() else [])
        if d.is_dir() and any(d.glob("test-*.parquet"))
    }


def digests(version_dir: Path) -> dict[str, str]:
    """question id -> a hash of what the question is (text, options, answer, image, dimension),
    read from the release's Parquet files (only those columns)."""
    out: dict[str, str] = {}
    for path in data_files(version_dir):
        table = pq.read_table(path, columns=list(CONTENT_COLUMNS))
        for row in table.to_pylist():
            out[row["question_id"]] = content_hash([row[c] for c in CONTENT_COLUMNS], length=16)
    return out


def changes(old: dict[str, str], new: dict[str, str]) -> dict[str, list[str]]:
    """Question ids added, removed and changed from `old` to `new`."""
    return {
        "added": sorted(set(new) - set(old)),
        "removed": sorted(set(old) - set(new)),
        "changed": sorted(q for q in set(old) & set(new) if old[q] != new[q]),
    }


def change_counts(found: dict[str, list[str]]) -> dict[str, int]:
    """How many questions were added, removed and changed, in that order."""
    return {k: len(found.get(k, [])) for k in ("added", "removed", "changed")}


def versions(folder: Path) -> list[Path]:
    """The published versions of one release name, oldest first (hidden folders being written
    are not versions)."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    found = [p for p in found if (p / MANIFEST).is_file()]
    return sorted(found, key=lambda p: (read_manifest(p).get("created_at", ""), p.name))


def _info(name: str, path: str, manifest: dict[str, Any], newest: str | None) -> ReleaseInfo:
    return ReleaseInfo(
        name=name,
        version=manifest["version"],
        path=path,
        created_at=manifest.get("created_at", ""),
        rows=manifest.get("rows", 0),
        parent=manifest.get("parent"),
        changes=change_counts(manifest.get("changes", {})),
        latest=manifest["version"] == newest,
        human_reviewed=manifest.get("review", {}).get("human_reviewed", 0),
        auto_accepted=manifest.get("review", {}).get("auto_only", 0),
    )


def list_releases(to: str | Path, name: str | None = None) -> list[ReleaseInfo]:
    """Every published version under `to` (a folder or a URL; or of one name), oldest first per
    name. `to` may also be one benchmark's folder (`releases/demo`) or one version's."""
    from benchfoundry.core.locations import is_url

    if is_url(to):
        return _list_at_url(str(to), name)
    to = Path(to)
    if not to.is_dir():
        raise ReleaseError(f"no releases folder {to}")
    if (to / MANIFEST).is_file():  # one version's folder: its benchmark's versions
        to, name = to.parent.parent, to.parent.name
    elif read_latest(to) is not None or versions(to):  # one benchmark's folder
        if name is not None and name != to.name:
            raise ReleaseError(f"{to} holds the versions of {to.name}, not of {name}")
        to, name = to.parent, to.name
    names = [name] if name else sorted(p.name for p in to.iterdir() if p.is_dir())
    out = []
    for n in names:
        folder = to / n
        newest = read_latest(folder)
        out += [_info(n, str(p), read_manifest(p), newest) for p in versions(folder)]
    return out


def _list_at_url(url: str, name: str | None) -> list[ReleaseInfo]:
    from benchfoundry.storage.objects import Store, StoreError

    try:
        store = Store(url)
        names = [name] if name else [n for n in store.folders() if not n.startswith(".")]
        out = []
        for n in names:
            pointer = store.read(f"{n}/{LATEST}")
            newest = pointer.decode("utf-8").strip() if pointer else None
            found = []
            for version in store.folders(n):
                manifest = store.read_json(f"{n}/{version}/{MANIFEST}")
                if isinstance(manifest, dict) and not version.startswith("."):
                    found.append((manifest.get("created_at", ""), version, manifest))
            out += [_info(n, f"{store.url}/{n}/{v}", m, newest) for _, v, m in sorted(found)]
    except StoreError as exc:
        raise ReleaseError(str(exc)) from None
    return out


# --- releases at a URL --------------------------------------------------------------------------
# A release name's folder at a URL (`s3://bucket/releases/<name>`) is published through a local
# mirror (`remote.default_workdir`): the publish runs there as on a local disk, then each new
# version's files are put and its manifest last, created only if absent (the version's atomic
# point: a reader takes a version only once its manifest is there, and checks every file against
# it); `latest` is one put of a small object, written under the name's lease.


def local_folder(to: str | Path, name: str) -> Path:
    """Where a publish writes `<to>/<name>`: the folder itself, or a URL's local mirror."""
    from benchfoundry.core.locations import is_url
    from benchfoundry.storage.remote import default_workdir

    if is_url(to):
        return default_workdir(f"{str(to).rstrip('/')}/{name}")
    return Path(to) / name


def _fetch_version(store: Any, version: str, into: Path) -> Path:
    """A published version at `store/<version>` into `into/<version>`, every file checked
    against the manifest (which is fetched last, so a partial fetch is never a version)."""
    target = into / version
    body = store.read(f"{version}/{MANIFEST}")
    if body is None:
        raise ReleaseError(f"{store.url}/{version} is not a published version (no {MANIFEST})")
    manifest = json.loads(body)
    local = target / MANIFEST
    if local.is_file() and local.read_bytes() == body and not verify(target):
        return target
    local.unlink(missing_ok=True)  # another manifest (a push that never finished): not this one
    for name, entry in sorted(manifest.get("files", {}).items()):
        path = target / name
        if path.is_file() and file_sha256(path) == entry["sha256"]:
            continue
        store.download(f"{version}/{name}", path, entry["sha256"])
    atomic_write_bytes(target / MANIFEST, body)
    return target


def pull_for_publish(store: Any, mirror: Path, version: str) -> None:
    """What a publish of `version` reads, into the mirror: `latest` and the version it names,
    and `version` itself if it is published already (so that it is verified, not rewritten)."""
    from benchfoundry.storage.objects import StoreError

    mirror.mkdir(parents=True, exist_ok=True)
    pointer = store.read(LATEST)
    for name in [version, pointer.decode("utf-8").strip() if pointer else None]:
        if name and store.exists(f"{name}/{MANIFEST}"):
            try:
                _fetch_version(store, name, mirror)
            except StoreError as exc:
                raise ReleaseError(
                    f"published version {store.url}/{name} is damaged: {exc}"
                ) from None
    if pointer:
        atomic_write_bytes(mirror / LATEST, pointer)
    else:
        (mirror / LATEST).unlink(missing_ok=True)


def push_published(store: Any, mirror: Path, lease: Any = None) -> list[str]:
    """Put the mirror's versions that the store lacks (files, then the manifest, created only if
    absent), then its `latest` (only while `lease` is still this publish's); return the
    versions put."""
    put = []
    for folder in versions(mirror):
        if store.exists(f"{folder.name}/{MANIFEST}"):
            continue
        manifest = read_manifest(folder)
        for name in sorted(manifest.get("files", {})):
            store.upload(folder / name, f"{folder.name}/{name}")
        if not store.create(f"{folder.name}/{MANIFEST}", (folder / MANIFEST).read_bytes()):
            continue  # the same version put by another publish in between: content-addressed
        put.append(folder.name)
    newest = read_latest(mirror)
    if newest and (store.read(LATEST) or b"").decode("utf-8").strip() != newest:
        if lease is not None:
            lease.check()
        store.write(LATEST, (newest + "\n").encode("utf-8"))
    return put


def fetch(location: str) -> Path:
    """A dataset at a URL as a local path: a release name's folder (its `latest` version), one
    published version, or one file (TSV, Parquet), fetched into the working cache and checked."""
    from benchfoundry.storage.objects import Store, StoreError
    from benchfoundry.storage.remote import default_workdir

    store = Store(location)
    into = default_workdir(store.url)
    try:
        if store.exists(MANIFEST):  # one version
            parent, version = store.url.rsplit("/", 1)
            return _fetch_version(Store(parent), version, default_workdir(parent))
        pointer = store.read(LATEST)
        if pointer:
            version = pointer.decode("utf-8").strip()
            _fetch_version(store, version, into)
            atomic_write_bytes(into / LATEST, pointer)
            return into
        if store.fs.isfile(store.root):
            name = store.url.rsplit("/", 1)[-1]
            store.download("", into / name)
            return into / name
    except StoreError as exc:
        raise ReleaseError(f"cannot fetch {location}: {exc}") from None
    raise ReleaseError(f"{location} is neither a release, a published version nor a file")
