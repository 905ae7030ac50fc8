"""Storage by URL: run folders, releases and sources on any filesystem fsspec knows (S3, GCS,
Azure, its in-memory one...). Local paths stay the default and never come here.

An object store has no rename and no file lock, so the guarantees that local storage gets from
`os.replace` and `flock` come from two primitives every store here offers:

- a put is atomic: an object is there whole or not at all;
- a put can be conditional (`mode="create"`: S3's `If-None-Match: *`, GCS's generation match 0,
  an exclusive open elsewhere): it fails when the object exists, so exactly one of two writers
  racing for a name wins.

A run folder at a URL (`RemoteRun`) is worked on in a local working copy and committed to the
store: changed files are put at their own names, then a commit object `_commits/<n>.json`
listing every file with its SHA-256 is created conditionally; that create is the atomic point (a
reader takes the newest commit and checks every file it fetches against it). A lease object
(`_lock.json`, also created conditionally) keeps a second build off the run while one holds it,
and a commit that loses the race for its number is refused, so two writers can never interleave.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchfoundry.core.locations import is_url, local_path
from benchfoundry.storage.atomic import atomic_write_json
from benchfoundry.storage.objects import Lease, RunLost, Store, StoreError, sha256_file, utc_now

COMMITS = "_commits"


STATE = ".remote.json"  # in the working copy: which store and commit it was taken from


# Working-copy files that are never committed: locks, temporary files, SQLite's side files (the
# cache is committed as a consistent snapshot of its database instead), the state file itself.
_NEVER = re.compile(r"(^|/)(\.lock$|\.tmp-|\.remote\.json$)|-(wal|shm|journal)$")


# The response caches (`model_cache.sqlite`, a judge's cache): what a lost entry held is asked
# again, so an uncommitted entry is no work to keep.
_CACHE = re.compile(r"(^|/|_)cache\.sqlite$")

OBJECTS = "_objects"  # content-addressed copies of every committed file: what pulls read


def default_workdir(url: str) -> Path:
    """Where a store's working copy lives: `$BENCHFOUNDRY_WORKDIR`, else the user's cache."""
    base = os.environ.get("BENCHFOUNDRY_WORKDIR") or (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchfoundry" / "runs"
    )
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", url.split("://", 1)[1])[-60:].strip("_")
    return Path(base) / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


def _snapshot(path: Path, to: Path) -> None:
    """A consistent copy of a SQLite database that may be open (its WAL folded in)."""
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        target = sqlite3.connect(to)
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()


def _rows_digest(path: Path) -> str:
    """A digest of what a SQLite database holds (its schema and every row, as SQL text), the
    same for two files that hold the same whatever their pages and header say."""
    digest = hashlib.sha256()
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for statement in connection.iterdump():
            digest.update(statement.encode("utf-8", "surrogatepass") + b"\n")
    finally:
        connection.close()
    return digest.hexdigest()


@dataclass(frozen=True)
class CommitInfo:
    number: int
    files: int
    uploaded: int
    bytes_uploaded: int
    removed: int


class RemoteRun:
    """A run folder at a URL, worked on in a local working copy."""

    def __init__(self, url: str, workdir: Path | None = None) -> None:
        self.store = Store(url)
        self.url = self.store.url
        self.path = (workdir or default_workdir(self.url)).resolve()

    # state of the working copy -------------------------------------------------------------

    def _state(self) -> dict[str, Any]:
        path = self.path / STATE
        if not path.is_file():
            return {}
        state = json.loads(path.read_text(encoding="utf-8"))
        return state if state.get("url") == self.url else {}

    def _save_state(self, number: int, files: dict[str, dict[str, Any]]) -> None:
        atomic_write_json(self.path / STATE, {"url": self.url, "commit": number, "files": files})

    def head(self) -> tuple[int, dict[str, Any]]:
        """The newest commit's number and body (0 and an empty body for a new run)."""
        self.store.fresh()
        names = [n for n in self.store.files(COMMITS) if re.fullmatch(rf"{COMMITS}/\d+\.json", n)]
        if not names:
            return 0, {"files": {}}
        newest = max(names, key=lambda n: int(n.split("/")[-1].split(".")[0]))
        body = self.store.read_json(newest)
        if not isinstance(body, dict) or not isinstance(body.get("files"), dict):
            raise StoreError(f"{self.url}/{newest} is not a commit")
        return int(body["number"]), body

    def _local_files(self) -> dict[str, Path]:
        if not self.path.is_dir():
            return {}
        out = {}
        for path in self.path.rglob("*"):
            rel = path.relative_to(self.path).as_posix()
            if path.is_file() and not _NEVER.search(rel):
                out[rel] = path
        return out

    def _hash(self, rel: str, path: Path, known: dict[str, dict[str, Any]]) -> str:
        stat = path.stat()
        entry = known.get(rel)
        if (
            entry
            and entry.get("bytes") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
        ):
            return entry["sha256"]
        return sha256_file(path)

    def _changed_locally(self, state: dict[str, Any]) -> list[str]:
        """Files of the working copy that differ from the commit it was taken at (work not
        committed). The response caches are left out (what they hold is asked again); another
        database (the review decisions) is compared by its rows, since opening a database in
        WAL mode rewrites its bytes without changing what it holds."""
        known = state.get("files", {})
        local = self._local_files()
        changed = [r for r in known if r not in local and not r.endswith(".sqlite")]
        for rel, path in local.items():
            if rel.endswith(".sqlite"):
                if not _CACHE.search(rel) and self._rows_changed(rel, path, known):
                    changed.append(rel)
            elif rel not in known or self._hash(rel, path, known) != known[rel]["sha256"]:
                changed.append(rel)
        return sorted(changed)

    def _rows_changed(self, rel: str, path: Path, known: dict[str, dict[str, Any]]) -> bool:
        """Whether a database of the working copy holds other rows than its committed snapshot
        (one not committed at all counts as changed)."""
        entry = known.get(rel)
        if entry is None:
            return True
        if self._hash(rel, path, known) == entry["sha256"]:
            return False  # the very bytes it was pulled or committed as
        scratch = self.path.parent / f".tmp-compare-{uuid.uuid4().hex}"
        scratch.mkdir(parents=True)
        try:
            mine, committed = scratch / "local.sqlite", scratch / "committed.sqlite"
            _snapshot(path, mine)
            self.store.download(f"{OBJECTS}/{entry['sha256']}", committed, entry["sha256"])
            return _rows_digest(mine) != _rows_digest(committed)
        finally:
            for leftover in scratch.iterdir():
                leftover.unlink()
            scratch.rmdir()

    # pull and commit -----------------------------------------------------------------------

    def pull(self) -> int:
        """Make the working copy the store's newest commit; return its number. A working copy
        already at that commit keeps its files (work a killed build did since is kept, as a
        local run folder keeps it). One behind is brought to it, every file fetched from the
        commit's content-addressed objects and checked by hash; if it holds work it never
        committed, that working copy is first moved aside (never deleted)."""
        number, commit = self.head()
        state = self._state()
        if state and state.get("commit") == number:
            return number
        if state and self._changed_locally(state):
            aside = self.path.with_name(
                f"{self.path.name}.uncommitted-{state.get('commit')}-{int(time.time())}"
            )
            os.replace(self.path, aside)
            import logging

            logging.getLogger("benchfoundry").warning(
                "%s: the working copy held work never committed (the store moved on to commit "
                "%s); it is kept in %s",
                self.url,
                number,
                aside,
            )
            state = {}
        self.path.mkdir(parents=True, exist_ok=True)
        wanted: dict[str, dict[str, Any]] = commit["files"]
        known = state.get("files", {})
        local = self._local_files()
        for rel, entry in sorted(wanted.items()):
            path = self.path / rel
            if rel in local and self._hash(rel, path, known) == entry["sha256"]:
                continue
            self.store.download(f"{OBJECTS}/{entry['sha256']}", path, entry["sha256"])
        for rel, path in local.items():
            if rel not in wanted:
                path.unlink()
        files = {
            rel: {**entry, "mtime_ns": (self.path / rel).stat().st_mtime_ns}
            for rel, entry in wanted.items()
        }
        self._save_state(number, files)
        return number

    def commit(self, note: str, lease: Lease | None = None) -> CommitInfo:
        """Put the working copy's changed files as content-addressed objects (which no commit
        reads until one names them), then create the next commit naming every file; then copy
        the changed files to their own names, for readers of the store as a folder."""
        self.store.writable()
        state = self._state()
        base = int(state.get("commit", 0))
        number, head = self.head()
        if number != base:
            raise RunLost(
                f"{self.url} moved to commit {number} ({head.get('note')!r}, pid "
                f"{head.get('pid')} on {head.get('host')}) since this working copy took commit "
                f"{base}; this command's work is left in {self.path}"
            )
        known: dict[str, dict[str, Any]] = state.get("files", {})
        files: dict[str, dict[str, Any]] = {}
        uploaded = sent = 0
        changed: list[str] = []
        snapshots = self.path / f".tmp-snapshots-{uuid.uuid4().hex}"
        try:
            for rel, path in sorted(self._local_files().items()):
                source = path
                if path.suffix == ".sqlite":
                    snapshots.mkdir(exist_ok=True)
                    source = snapshots / path.name
                    _snapshot(path, source)
                    digest, size = sha256_file(source), source.stat().st_size
                else:
                    digest, size = self._hash(rel, path, known), path.stat().st_size
                files[rel] = {"sha256": digest, "bytes": size}
                if head["files"].get(rel, {}).get("sha256") != digest:
                    changed.append(rel)
                    if not self.store.exists(f"{OBJECTS}/{digest}"):
                        self.store.upload(source, f"{OBJECTS}/{digest}")
                        uploaded += 1
                        sent += size
                if source is path:
                    files[rel]["mtime_ns"] = path.stat().st_mtime_ns
        finally:
            for leftover in snapshots.glob("*") if snapshots.is_dir() else []:
                leftover.unlink()
            if snapshots.is_dir():
                snapshots.rmdir()
        listed = {rel: {k: e[k] for k in ("sha256", "bytes")} for rel, e in files.items()}
        if listed == head["files"] and number:
            self._save_state(number, files)
            return CommitInfo(number, len(files), 0, 0, 0)  # nothing changed: no new commit
        body = {
            "number": number + 1,
            "parent": number,
            "note": note,
            "created_at": utc_now(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "files": listed,
        }
        data = (json.dumps(body, indent=1, sort_keys=True) + "\n").encode("utf-8")
        if lease is not None:
            lease.check()  # a command whose lease was taken over never commits
        if not self.store.create(f"{COMMITS}/{number + 1:08d}.json", data):
            raise RunLost(
                f"{self.url}: another writer made commit {number + 1} first; this command's "
                f"work is left in {self.path}"
            )
        self._save_state(number + 1, files)
        for rel in changed:  # the folder view: plain names, copied inside the store
            self.store.fs.copy(
                self.store.key(f"{OBJECTS}/{listed[rel]['sha256']}"), self.store.key(rel)
            )
        removed = [rel for rel in head["files"] if rel not in files]
        for rel in removed:  # no longer in the run (a table rewritten into one new part)
            self.store.delete(rel)
        live = {e["sha256"] for e in listed.values()}
        for old in {e["sha256"] for e in head["files"].values()} - live:
            self.store.delete(f"{OBJECTS}/{old}")  # replaced by this commit
        return CommitInfo(number + 1, len(files), uploaded, sent, len(removed))


@dataclass
class RunLocation:
    """Where a command works on a run: `path` (local), and `commit` to call after each stage
    (a no-op for a local run folder)."""

    path: Path
    url: str | None = None
    commit: Callable[[str], CommitInfo | None] = lambda note: None

    @property
    def shown(self) -> str:
        return self.url or str(self.path)


@contextlib.contextmanager
def run_folder_at(
    location: str | os.PathLike[str], write: bool = True, wait_s: float = 0.0
) -> Iterator[RunLocation]:
    """The run folder at `location`: a local path as it is; a URL through a working copy taken
    from its newest commit, under the run's lease (waiting up to `wait_s` for it), committed by
    `commit(note)` and once more when the block ends (also when it fails: every table write is
    atomic, so what is there is a valid run folder to resume from, as after a kill of a local
    build). `write=False` reads: a working copy of its own, no lease, nothing committed."""
    if not is_url(location):
        yield RunLocation(local_path(location))
        return
    remote = RemoteRun(os.fspath(location))
    if not write:
        reader = RemoteRun(remote.url, remote.path.with_name(remote.path.name + ".read"))
        reader.pull()
        yield RunLocation(reader.path, reader.url)
        return
    lease = Lease(remote.store)
    with lease.held(wait_s):
        remote.pull()
        where = RunLocation(remote.path, remote.url, lambda note: remote.commit(note, lease))
        try:
            yield where
        except RunLost:
            raise
        except BaseException:
            remote.commit("end of a failed command", lease)
            raise
        remote.commit("end of command", lease)


def run_url(path: str | os.PathLike[str]) -> str | None:
    """The URL a working copy was taken from, or None for a plain local run folder."""
    state = Path(path) / STATE
    if not state.is_file():
        return None
    return json.loads(state.read_text(encoding="utf-8")).get("url")
