"""Sources at a URL, mirrored into the local working cache: each object fetched again only
when its store lists it changed (a version mark: ETag, hash, generation or modification time),
so that ingest reads local files whose names still say where they came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchfoundry.storage.atomic import atomic_write_json
from benchfoundry.storage.objects import Store, StoreError
from benchfoundry.storage.remote import default_workdir

# What says an object changed, by the names filesystems give it in their listings: S3's ETag,
# GCS's hash and generation, else a modification time (memory filesystems: creation time).
_VERSION_KEYS = ("ETag", "etag", "md5Hash", "crc32c", "generation", "LastModified", "mtime",
                 "updated", "last_modified", "created")  # fmt: skip


MIRRORED = ".mirrored.json"  # beside a mirror's folder: what each local copy was fetched as


def _version(info: dict[str, Any]) -> list[Any]:
    """An object's size and its first version mark of `_VERSION_KEYS` (None where the
    filesystem lists none: size alone decides there)."""
    for key in _VERSION_KEYS:
        if info.get(key) not in (None, ""):
            return [info.get("size"), f"{key}={info[key]}"]
    return [info.get("size"), None]


def mirrored_record(copy: Path) -> Path:
    """The record of what each object of a mirror's folder was fetched as: beside the folder,
    not in it, so that the source's own files (a `.mirrored.json` among them) are all the
    folder holds."""
    return copy.with_name(copy.name + MIRRORED)


def mirror(url: str) -> Path:
    """A source at a URL (a folder of images, or one TSV/Parquet file) as a local copy in the
    working cache: an object is fetched when its copy is absent, of another size, or not known
    to have been fetched from the version the URL holds now (ETag, hash or modification time,
    as its filesystem lists them); objects the URL no longer holds are removed from the copy.
    Returns the copy's folder or file."""
    store = Store(url)
    into = default_workdir(store.url)
    record = mirrored_record(into)
    try:
        fetched = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        fetched = {}
    if not isinstance(fetched, dict):
        fetched = {}

    def bring(rel: str, target: Path, version: list[Any]) -> None:
        """Fetch unless the copy is this version; note the version once the copy is it."""
        if not (
            target.is_file() and target.stat().st_size == version[0] and fetched.get(rel) == version
        ):
            fetched.pop(rel, None)
            store.download(rel, target)
        fetched[rel] = version

    if store.fs.isfile(store.root):
        name = store.url.rsplit("/", 1)[-1]
        target = into / name
        try:
            bring("", target, _version(store.fs.info(store.root)))
        finally:
            record.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(record, {"": fetched[""]} if "" in fetched else {})
        return target
    if not store.fs.isdir(store.root):
        raise StoreError(f"{store.url} does not exist (neither a folder nor a file)")
    versions = {}
    for name, info in store.fs.find(store.root, withdirs=False, detail=True).items():
        if name.startswith(store.root + "/"):
            versions[name[len(store.root) + 1 :]] = _version(info)
    into.mkdir(parents=True, exist_ok=True)
    try:
        for rel, version in sorted(versions.items()):
            bring(rel, into / rel, version)
    finally:  # what was fetched is known even when a later fetch fails
        atomic_write_json(record, {rel: v for rel, v in fetched.items() if rel in versions})
    for path in sorted(into.rglob("*"), reverse=True):
        rel = path.relative_to(into).as_posix()
        if path.name.startswith(".tmp-"):
            continue  # another mirror of this URL, downloading
        if path.is_file() and rel not in versions:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return into
