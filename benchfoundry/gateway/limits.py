"""Per-model concurrency and rate limits: requests and tokens per minute, and pauses that a
server asks for with Retry-After."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from benchfoundry.core.clock import SYSTEM, Clock


class TokenBucket:
    """`rate` units per second, bursts up to `capacity`."""

    def __init__(self, rate: float, capacity: float, clock: Clock = SYSTEM) -> None:
        self.rate = rate
        self.capacity = capacity
        self.level = capacity
        self.clock = clock
        self.stamp = clock.now()
        self.lock = threading.Lock()

    def take(self, amount: float) -> float:
        """Reserve `amount` in full (the level may go below zero: later callers then wait for
        it to refill); return how long this caller must wait before using it."""
        with self.lock:
            now = self.clock.now()
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now
            self.level -= amount
            return 0.0 if self.level >= 0 else -self.level / self.rate


class AdaptiveSlots:
    """At most `limit` holders at once; the limit starts at `most`, halves when the server says
    it is overloaded (a 429; once per `calm_s`), and grows by one after `limit` calls in a row
    went through, back up to `most` (additive increase, multiplicative decrease, as TCP does)."""

    def __init__(self, most: int, clock: Clock = SYSTEM, calm_s: float = 1.0) -> None:
        self.most = most
        self.limit = most
        self.clock = clock
        self.calm_s = calm_s
        self.held = 0
        self.lowest = most  # the lowest limit it came down to
        self._fine = 0
        self._cut_at = float("-inf")
        self._cond = threading.Condition()

    def __enter__(self) -> None:
        with self._cond:
            while self.held >= self.limit:
                self._cond.wait()
            self.held += 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self.held -= 1
            self._cond.notify()

    def throttled(self) -> None:
        with self._cond:
            now = self.clock.now()
            if now - self._cut_at >= self.calm_s:
                self.limit = max(1, self.limit // 2)
                self.lowest = min(self.lowest, self.limit)
                self._cut_at, self._fine = now, 0

    def succeeded(self) -> None:
        with self._cond:
            if self.limit >= self.most:
                return
            self._fine += 1
            if self._fine >= self.limit:
                self.limit, self._fine = self.limit + 1, 0
                self._cond.notify()


class ModelLimiter:
    """Everything that paces the calls to one model."""

    def __init__(
        self, concurrency: int, rpm: float | None, tpm: float | None, clock: Clock = SYSTEM
    ) -> None:
        self.clock = clock
        self.slots = AdaptiveSlots(concurrency, clock)
        self.requests = TokenBucket(rpm / 60.0, 1.0, clock) if rpm else None
        # Tokens: refill per second, burst up to one minute's worth.
        self.tokens = TokenBucket(tpm / 60.0, tpm, clock) if tpm else None
        self._paused_until = 0.0
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    def throttled(self) -> None:
        """The server answered 429: fewer calls at once for a while."""
        self.slots.throttled()

    def succeeded(self) -> None:
        self.slots.succeeded()

    def pause(self, seconds: float) -> None:
        """Hold every call to this model for `seconds` (a server's Retry-After, already capped)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self.clock.now() + seconds)

    def _wait_pause(self) -> None:
        while (delay := self._paused_until - self.clock.now()) > 0:
            self.clock.sleep(delay)

    @contextmanager
    def slot(self, estimated_tokens: int) -> Iterator[None]:
        with self.slots:
            self._wait_pause()
            for bucket, amount in ((self.requests, 1.0), (self.tokens, float(estimated_tokens))):
                if bucket is not None and (delay := bucket.take(amount)) > 0:
                    self.clock.sleep(delay)
            self._wait_pause()
            with self._lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield
            finally:
                with self._lock:
                    self.in_flight -= 1


def backoff(
    attempt: int, base: float = 0.5, cap: float = 30.0, retry_after: float | None = None
) -> float:
    """Seconds to wait before attempt `attempt + 1`: exponential with full jitter, never less
    than the server's Retry-After."""
    delay = random.uniform(0, min(cap, base * 2**attempt))
    return max(delay, retry_after or 0.0)
