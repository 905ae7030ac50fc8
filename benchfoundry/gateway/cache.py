"""Content-addressed response cache in SQLite.

The key is a hash of everything that determines an answer: provider, model id, endpoint,
decoding parameters (with the seed, so sampled calls replay too), the messages with images by
their hash, and the prompt version. A greedy answer that ended by itself is also stored under
the same key without `max_tokens`, and answers that call under any cap it fits in (quality
control and the evaluation ask the same questions with different caps). Only answers are
stored, never credentials.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from benchfoundry.core.ids import content_hash
from benchfoundry.gateway.types import GenerateParams, Response

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now'))
)
"""


# Keys of the second entries of greedy answers (`uncapped_key`): not counted as responses.
UNCAPPED = "any-cap:"


def cache_key(material: dict[str, Any]) -> str:
    return content_hash(material)


def uncapped_key(material: dict[str, Any], params: GenerateParams) -> str | None:
    """The key of a greedy call apart from its `max_tokens` (None for a sampled call): an
    answer that ended on its own (`ended_alone`) is stored under it too, and answers the same
    call under any cap it fits in."""
    if params.temperature != 0:
        return None
    what = {**material, "params": params.model_dump(mode="json", exclude={"max_tokens"})}
    return UNCAPPED + content_hash(what)


def ended_alone(response: Response, max_tokens: int) -> bool:
    """Whether a greedy answer stopped by itself (not cut by its cap) within `max_tokens`."""
    return response.finish_reason == "stop" and 0 < response.tokens_out <= max_tokens


class ResponseCache:
    """A thread-safe SQLite store of responses by key."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        # In WAL mode, NORMAL syncs at checkpoints rather than at each answer: a killed process
        # loses nothing committed (only a power cut can lose the last answers), and a put costs
        # 0.04 ms instead of 3.6 (an fsync each), which held every call in flight behind the
        # cache's lock (64 answers a second took a quarter of every second).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get(self, key: str) -> Response | None:
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return Response.model_validate_json(row[0]) if row else None

    def put(self, key: str, response: Response) -> None:
        stored = response.model_copy(update={"cached": False})
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, model, response) VALUES (?, ?, ?)",
                (key, response.model, stored.model_dump_json()),
            )
            self._db.commit()

    def __len__(self) -> int:
        """Responses stored (a greedy answer's second entry under `uncapped_key` not counted)."""
        with self._lock:
            return self._db.execute(
                "SELECT COUNT(*) FROM responses WHERE key NOT LIKE ?", (UNCAPPED + "%",)
            ).fetchone()[0]

    def export_to(self, path: str | Path) -> int:
        """Copy the cache into a new SQLite file to share; return the number of responses."""
        target = Path(path)
        if target.exists():
            raise FileExistsError(f"{target} exists; export writes a new file")
        with self._lock, sqlite3.connect(target) as out:
            self._db.backup(out)
        return len(self)

    def merge_from(self, path: str | Path) -> int:
        """Add the responses of another cache file that this one lacks; return how many."""
        before = len(self)
        with self._lock:
            self._db.execute("ATTACH DATABASE ? AS other", (str(path),))
            try:
                self._db.execute("INSERT OR IGNORE INTO responses SELECT * FROM other.responses")
                self._db.commit()
            finally:
                self._db.execute("DETACH DATABASE other")
        return len(self) - before

    def close(self) -> None:
        with self._lock:
            self._db.close()
