"""A circuit breaker per model: a server that fails every call is cut short, not retried to
the end. After `after` attempts in a row that failed the same way (HTTP 5xx, a dropped
connection, no answer in time, an unreadable reply) with no answer between them, the breaker
opens: every later attempt to that model fails at once as `server_failing`, without a request.
A refusal about one request (HTTP 4xx) is an answer of a working server and ends the run; a
429 is pacing, not failure, and changes nothing. A breaker stays open for the life of its
gateway: a later run (a new process) asks the model again."""

from __future__ import annotations

import threading

# The kinds of transient failure that say the server, not the request, is failing.
SERVER_KINDS = ("server_error", "connection", "timeout", "malformed_response", "empty_response")
OPEN_KIND = "server_failing"  # the kind of a call the open breaker refused


class Breaker:
    """Counts one model's failed attempts in a row; `why` says why it opened (None: closed)."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.why: str | None = None
        self._kind: str | None = None
        self._in_a_row = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.why is not None

    def answered(self) -> None:
        """An attempt the server answered (or refused, which is an answer too)."""
        with self._lock:
            self._kind, self._in_a_row = None, 0

    def failed(self, kind: str, message: str) -> None:
        """An attempt that failed with `kind` (a ProviderError's); `message` says how."""
        if kind == "rate_limited":
            return
        if kind not in SERVER_KINDS:
            self.answered()
            return
        with self._lock:
            self._in_a_row = self._in_a_row + 1 if kind == self._kind else 1
            self._kind = kind
            if self.why is None and self._in_a_row >= self.after:
                said = _LABELS.get(kind, kind)
                if kind == "server_error" and (status := _status(message)):
                    said = f"server errors (the last {status})"
                self.why = (
                    f"server failing: {self._in_a_row} calls in a row failed ({said}) with no "
                    "answer between them; the rest were not asked"
                )


_LABELS = {
    "connection": "the connection failed",
    "timeout": "no answer in time",
    "malformed_response": "unreadable replies",
    "empty_response": "empty replies",
}


def _status(message: str) -> str | None:
    """`HTTP 500` from a failure's message, else None."""
    if message.startswith("HTTP ") and message[5:8].isdigit():
        return message[:8]
    return None
