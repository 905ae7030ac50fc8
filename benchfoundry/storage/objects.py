"""An object store: any filesystem fsspec knows (S3, GCS, its in-memory one...), reached
through two primitives every store here offers: an atomic put, and a conditional one (created
only if absent). A lease object made with the second keeps one writer at a time on a run or a
release series."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchfoundry.core.errors import UserError
from benchfoundry.core.locations import URL_PATTERN

LEASE = "_lock.json"


LEASE_SECONDS = 600.0


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


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """A folder of a filesystem given by URL; every name is relative to it."""

    def __init__(self, url: str) -> None:
        from urllib.parse import urlsplit

        import fsspec

        self.url = url.rstrip("/")
        scheme = URL_PATTERN.match(self.url).group("scheme").lower()  # type: ignore[union-attr]
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
                "taken_at": utc_now(),
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
