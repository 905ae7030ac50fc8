"""Keep API keys out of everything the gateway says: errors, logs, caches, reports."""

from __future__ import annotations

import os
import re
import threading

_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$")
# Credentials this process was given inside endpoint URLs (see `models.protect`).
_REMEMBERED: set[str] = set()
_LOCK = threading.Lock()


def remember(*values: str) -> None:
    """Treat these values as secrets from now on (URL credentials, for example)."""
    with _LOCK:
        _REMEMBERED.update(v for v in values if len(v) >= 3)


def secret_values(extra_names: tuple[str, ...] = ()) -> list[str]:
    """Values of environment variables that hold secrets (by name), longest first."""
    names = {n for n in os.environ if _SECRET_NAME.search(n)} | set(extra_names)
    values = {os.environ[n] for n in names if os.environ.get(n) and len(os.environ[n]) >= 6}
    with _LOCK:
        values |= _REMEMBERED
    return sorted(values, key=len, reverse=True)


def redact(text: str, extra_names: tuple[str, ...] = ()) -> str:
    """`text` with every secret value (and bearer tokens) replaced by `***`."""
    for value in secret_values(extra_names):
        text = text.replace(value, "***")
    return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}", r"\1***", text)
