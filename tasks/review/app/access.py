"""Who may use the review app: the principal a request acts as, how a token becomes one, and the
slow-down that makes guessing tokens from one address expensive.

Authentication is one callable, `authenticate(token) -> Principal | None`, so that a store of
accounts can replace the single shared token without touching the checks around it. `Access`
adds the one other choice: what a request with no credentials at all acts as (`anonymous=None`:
refused). The review app's own access is `Access.for_accounts`: the users of the run's review
database, each with their own token and role."""

from __future__ import annotations

import hmac
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Principal:
    """Who a request acts as, and with which role."""

    name: str
    role: str


Authenticate = Callable[[str], "Principal | None"]
# The shared `--token`'s principal, and who a request acts as on an open (token-less) app.
TOKEN_PRINCIPAL = Principal(name="reviewer", role="admin")
OPEN_PRINCIPAL = Principal(name="local", role="admin")


def token_authenticator(token: str) -> Authenticate:
    """An `authenticate` that accepts the one shared token (compared in constant time)."""
    if not token:
        raise ValueError("a token is a non-empty text")
    expected = token.encode("utf-8")

    def authenticate(given: str) -> Principal | None:
        return TOKEN_PRINCIPAL if hmac.compare_digest(given.encode("utf-8"), expected) else None

    return authenticate


@dataclass(frozen=True)
class Access:
    """How a request gets its principal: `authenticate` checks a presented token (None: no token
    is ever accepted); `anonymous` is the principal of a request that presents none (None: such a
    request is refused)."""

    authenticate: Authenticate | None
    anonymous: Principal | None

    @classmethod
    def for_token(cls, token: str | None) -> Access:
        """The app's access today: with a token, it alone; without, open to every request (the
        CLI only serves an open app on loopback)."""
        if token:
            return cls(authenticate=token_authenticator(token), anonymous=None)
        return cls(authenticate=None, anonymous=OPEN_PRINCIPAL)

    @classmethod
    def for_accounts(cls, store: Any) -> Access:
        """Accounts: each user's own token (the review database's `users`), never anonymous;
        a revoked token is refused at once."""

        def authenticate(given: str) -> Principal | None:
            user = store.authenticate(given)
            return Principal(name=user.name, role=user.role) if user is not None else None

        return cls(authenticate=authenticate, anonymous=None)

    @property
    def checks_tokens(self) -> bool:
        return self.authenticate is not None


class Throttle:
    """Failed sign-ins per client address. After `max_failures` failures within `window_s`
    seconds the address is locked out: each further attempt waits `delay()` (doubling with each
    failure, at most `max_delay_s`) and is refused without its token being checked, and counts as
    one more failure; the lock lifts once the failures age out of the window. A good token, when
    the address is not locked out, forgets its failures. `clock` is injectable for tests."""

    def __init__(
        self,
        max_failures: int = 5,
        window_s: float = 60.0,
        base_delay_s: float = 0.25,
        max_delay_s: float = 4.0,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ) -> None:
        if max_failures < 1 or window_s <= 0 or base_delay_s < 0 or max_delay_s < base_delay_s:
            raise ValueError("max_failures >= 1, window_s > 0, 0 <= base_delay_s <= max_delay_s")
        self.max_failures = max_failures
        self.window_s = window_s
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.clock = clock
        self.max_clients = max_clients
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str) -> deque[float]:
        times = self._failures.get(client)
        if times is None:
            return deque()
        cutoff = self.clock() - self.window_s
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._failures[client]
        return times

    def failures(self, client: str) -> int:
        """Failures of this address within the window."""
        return len(self._recent(client))

    def locked(self, client: str) -> bool:
        return self.failures(client) >= self.max_failures

    def delay(self, client: str) -> float:
        """Seconds a locked-out attempt waits before it is refused (0 when not locked out)."""
        over = self.failures(client) - self.max_failures
        if over < 0:
            return 0.0
        return min(self.base_delay_s * 2 ** min(over, 32), self.max_delay_s)

    def fail(self, client: str) -> None:
        if client not in self._failures and len(self._failures) >= self.max_clients:
            self._forget_stale()
        self._recent(client)  # drop what aged out
        self._failures.setdefault(client, deque()).append(self.clock())

    def succeed(self, client: str) -> None:
        self._failures.pop(client, None)

    def _forget_stale(self) -> None:
        """Bound the memory an attacker with many addresses can take: drop aged-out entries,
        then the oldest ones."""
        for client in list(self._failures):
            self._recent(client)
        while len(self._failures) >= self.max_clients:
            oldest = min(self._failures, key=lambda c: self._failures[c][-1])
            del self._failures[oldest]
