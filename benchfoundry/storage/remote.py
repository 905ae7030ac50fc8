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
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchfoundry.core.errors import UserError
from benchfoundry.core.locations import _URL, is_url, local_path
from benchfoundry.storage.atomic import atomic_write_json

COMMITS = "_commits"
LEASE = "_lock.json"
STATE = ".remote.json"  # in the working copy: which store and commit it was taken from
LEASE_SECONDS = 600.0
# Working-copy files that are never committed: locks, temporary files, SQLite's side files (the
# cache is committed as a consistent snapshot of its database instead), the state file itself.
_NEVER = re.compile(r"(^|/)(\.lock$|\.tmp-|\.remote\.json$)|-(wal|shm|journal)$")
OBJECTS = "_objects"  # content-addressed copies of every committed file: what pulls read
# Filesystems whose drivers put conditionally for real (fsspec's default `mode="create"` checks,
# then writes): the only ones a run folder or a release may be written to.
CONDITIONAL = {"s3", "s3a", "gs", "gcs", "memory"}
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}


class StoreError(UserError, RuntimeError):
    """A store that cannot be reached or read, or a write that would break its guarantees."""


class StoreBusy(StoreError):
    """Another writer holds the run (its lease has not expired) or committed first."""


class RunLost(StoreBusy):
    """This command's hold on the run ended: its lease was taken over, or the store moved on."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """A folder of a filesystem given by URL; every name is relative to it."""

    def __init__(self, url: str) -> None:
        from urllib.parse import urlsplit

        import fsspec

        self.url = url.rstrip("/")
        scheme = _URL.match(self.url).group("scheme").lower()  # type: ignore[union-attr]
        self.scheme = scheme
        parts = urlsplit(self.url)
        if parts.password or parts.query:
            raise StoreError(
                f"{scheme}://{parts.hostname or ''}...: a URL may not carry credentials (a "
                "password or a query string such as a signature); give them to the store's "
                "driver through its environment (docs/storage.md)"
            )
        try:
            self.fs, self.root = fsspec.core.url_to_fs(self.url)
        except ImportError as exc:
            extra = _EXTRAS.get(scheme)
            hint = f"pip install 'benchfoundry[{extra}]'" if extra else "install its fsspec driver"
            raise StoreError(
                f"{self.url}: no filesystem for '{scheme}://' ({hint}): {exc}"
            ) from None
        except ValueError as exc:
            raise StoreError(f"{self.url}: {exc}") from None
        self.root = self.root.rstrip("/")

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    def key(self, name: str) -> str:
        return f"{self.root}/{name}" if name else self.root

    def read(self, name: str) -> bytes | None:
        """The object's bytes, or None when there is none."""
        try:
            return self.fs.cat_file(self.key(name))
        except FileNotFoundError:
            return None

    def read_json(self, name: str) -> Any:
        data = self.read(name)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as exc:
            raise StoreError(f"{self.url}/{name} is not JSON: {exc}") from None

    def write(self, name: str, data: bytes) -> None:
        """Put the object (one put: a reader sees the old bytes or the new ones)."""
        self.fs.pipe_file(self.key(name), data)

    def writable(self) -> None:
        """Refuse to write a run or a release where a conditional put is not known to work."""
        if self.scheme not in CONDITIONAL:
            raise StoreError(
                f"{self.url}: '{self.scheme}://' is not known to put objects conditionally "
                f"(needed for commits and leases); run folders and releases can live on "
                f"{', '.join(sorted(CONDITIONAL))}; sources can be read from any fsspec URL"
            )

    def create(self, name: str, data: bytes) -> bool:
        """Put the object only if there is none; False when it exists (another writer won)."""
        import errno

        try:
            self.fs.pipe_file(self.key(name), data, mode="create")
        except FileExistsError:
            return False
        except OSError as exc:  # S3 answers a race of two conditional puts with 409 (EBUSY)
            if exc.errno == errno.EBUSY:
                return False
            raise
        return True

    def fresh(self) -> Store:
        """Forget the driver's listing cache (s3fs keeps one) before a decision on a listing."""
        with contextlib.suppress(AttributeError):
            self.fs.invalidate_cache()
        return self

    def exists(self, name: str) -> bool:
        return bool(self.fs.exists(self.key(name)))

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self.key(name))

    def files(self, prefix: str = "") -> list[str]:
        """Names of the objects under `prefix` (recursively), sorted."""
        base = self.key(prefix).rstrip("/")
        try:
            found = self.fs.find(base, withdirs=False)
        except FileNotFoundError:
            return []
        cut = len(self.root) + 1
        return sorted(p[cut:] for p in found if p.startswith(self.root + "/"))

    def folders(self, prefix: str = "") -> list[str]:
        """Names of the folders directly under `prefix`."""
        try:
            found = self.fs.ls(self.key(prefix).rstrip("/"), detail=True)
        except FileNotFoundError:
            return []
        return sorted(
            e["name"].rstrip("/").rsplit("/", 1)[-1] for e in found if e["type"] == "directory"
        )

    def download(self, name: str, to: Path, sha256: str | None = None) -> None:
        """Fetch the object to `to` atomically, checked against `sha256` when given."""
        to.parent.mkdir(parents=True, exist_ok=True)
        tmp = to.parent / f".tmp-{uuid.uuid4().hex}-{to.name}"
        try:
            try:
                self.fs.get_file(self.key(name), str(tmp))
            except FileNotFoundError:
                raise StoreError(f"{self.url}/{name} is missing") from None
            if sha256 is not None and sha256_file(tmp) != sha256:
                raise StoreError(
                    f"{self.url}/{name} differs from the hash its commit gives "
                    "(changed by a newer commit while being read, or damaged): run again"
                )
            os.replace(tmp, to)
        finally:
            tmp.unlink(missing_ok=True)

    def upload(self, path: Path, name: str) -> None:
        self.fs.put_file(str(path), self.key(name))


# --- one writer at a time -------------------------------------------------------------------


def _dead_here(held: dict[str, Any]) -> bool:
    """A lease taken on this machine by a process that is gone (killed): free to take now."""
    import psutil

    pid = held.get("pid")
    return (
        held.get("host") == socket.gethostname()
        and isinstance(pid, int)
        and pid != os.getpid()
        and not psutil.pid_exists(pid)
    )


@dataclass
class Lease:
    """A claim on a store folder: `name` created only if absent, naming its holder and when it
    lapses. A holder that dies stops renewing it; once lapsed, the next writer takes it over."""

    store: Store
    name: str = LEASE
    seconds: float = LEASE_SECONDS
    holder: str = field(default_factory=lambda: uuid.uuid4().hex)

    def _body(self) -> bytes:
        return json.dumps(
            {
                "holder": self.holder,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "taken_at": _now(),
                "expires": time.time() + self.seconds,
            },
            sort_keys=True,
        ).encode("utf-8")

    def acquire(self, wait_s: float = 0.0) -> None:
        """Take the lease; while another holds it, wait up to `wait_s` seconds, then refuse."""
        self.store.writable()
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self._try_acquire()
                return
            except RunLost:
                raise
            except StoreBusy:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(min(5.0, max(0.1, deadline - time.monotonic())))

    def _try_acquire(self) -> None:
        for _ in range(5):
            if self.store.create(self.name, self._body()):
                return
            held = self.store.read_json(self.name)
            if held is None:
                continue  # released in between: try again
            if held.get("holder") == self.holder:
                return
            if float(held.get("expires", 0)) > time.time() and not _dead_here(held):
                until = datetime.fromtimestamp(float(held["expires"]), UTC).isoformat(
                    timespec="seconds"
                )
                raise StoreBusy(
                    f"{self.store.url} is being written by another build (pid "
                    f"{held.get('pid')} on {held.get('host')}, since {held.get('taken_at')}; "
                    f"its lease lapses at {until} unless renewed)"
                )
            # Lapsed (its holder died): the one taker that creates the take-over marker of that
            # lease replaces it; a racing taker loses at the marker and reads the new holder.
            marker = f"{self.name}.taken-{held.get('holder')}-{held.get('expires')}"
            if self.store.create(marker, self._body()):
                self.store.write(self.name, self._body())
                return
            time.sleep(0.05)
        raise StoreBusy(f"{self.store.url}: could not take the lease {self.name}")

    def check(self) -> None:
        """Raise `RunLost` unless this holder still holds the lease."""
        held = self.store.read_json(self.name)
        if held is None or held.get("holder") != self.holder:
            raise RunLost(
                f"{self.store.url}: this command's lease lapsed and another writer took it; "
                "its work since the last commit stays in the working copy"
            )

    def renew(self) -> None:
        self.check()
        self.store.write(self.name, self._body())

    def release(self) -> None:
        held = self.store.read_json(self.name)
        if held is not None and held.get("holder") == self.holder:
            self.store.delete(self.name)

    @contextlib.contextmanager
    def held(self, wait_s: float = 0.0) -> Iterator[Lease]:
        """Hold the lease for the block, renewed from a thread at a sixth of its length (a
        failed renewal is tried again at the next turn; a lost lease ends the renewals)."""
        self.acquire(wait_s)
        stop = threading.Event()
        lost: list[BaseException] = []

        def keep() -> None:
            while not stop.wait(self.seconds / 6):
                try:
                    self.renew()
                except RunLost as exc:
                    lost.append(exc)
                    return
                except Exception:  # noqa: BLE001,S112 - a store hiccup: renew at the next turn
                    continue

        thread = threading.Thread(target=keep, name="benchfoundry-lease", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()
            if not lost:
                self.release()
        if lost:
            raise lost[0]


# --- a run folder at a URL ------------------------------------------------------------------


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
        committed); the SQLite cache is left out (it is rebuilt from the commit's snapshot)."""
        known = state.get("files", {})
        local = self._local_files()
        changed = [r for r in known if r not in local and not r.endswith(".sqlite")]
        for rel, path in local.items():
            if rel.endswith(".sqlite"):
                continue
            if rel not in known or self._hash(rel, path, known) != known[rel]["sha256"]:
                changed.append(rel)
        return sorted(changed)

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
            "created_at": _now(),
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
