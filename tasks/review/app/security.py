"""The review app's web safety, as ASGI middlewares wrapped around the Starlette app (outermost
first): every response carries the security headers; a request must name a Host the app serves
(DNS rebinding); a state-changing request must be JSON from the app's own origin (CSRF) and every
body stays under 1 MiB; and every request gets its principal (`request.state.principal`) or is
refused, with tokens moved out of URLs into a cookie and repeated bad tokens slowed down.

Each refusal is a JSON body `{"error": "..."}` with its status: 400 (no Host), 421 (a foreign
Host), 403 (a foreign Origin or a cross-site fetch), 415 (not JSON), 413 (too large), 401 (no or a
bad token), 429 (locked out after repeated bad tokens). A sign-in link (`?token=`) that does not
work, opened by a browser, gets a page instead that says what to do."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchfoundry.tasks.review.app.access import Access, Throttle

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
MAX_BODY_BYTES = 1 << 20
COOKIE = "review_token"
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
# Reachable without a principal: the sign-in page, its script and stylesheet, signing in and out.
PUBLIC_PATHS = frozenset({"/signin", "/api/signin", "/api/signout"})
PUBLIC_PREFIXES = ("/static/",)
DATA_PREFIXES = ("/api/", "/images/", "/clips/", "/static/")  # never answered with a page


def refusal(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def split_host(value: str) -> tuple[str, int | None]:
    """A Host header (or `--allowed-host` value) as (lower-case name, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):  # [::1]:8765
        name, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":")
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:  # a name, or a bare IPv6 address
        name, port = value, ""
    if port and not port.isdigit():
        raise ValueError(f"{value!r} has a port that is not a number")
    return name.rstrip("."), int(port) if port else None


def is_loopback(host: str) -> bool:
    """Whether an address to bind (or a Host name) is this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_allowed_host(value: str) -> str:
    """An `--allowed-host` value, checked: a host name or address, with an optional port."""
    if not value or "/" in value or "@" in value or any(c.isspace() for c in value):
        raise ValueError(
            f"--allowed-host takes a host name such as review.example.org, not {value!r}"
        )
    split_host(value)
    return value


class SecurityHeaders:
    """Adds the Content-Security-Policy, nosniff and no-referrer headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.encode("latin-1") for k in SECURITY_HEADERS}
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                headers += [
                    (k.encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class HostGuard:
    """Serves only requests whose Host is loopback or one of `allowed_hosts` (a name alone allows
    any port; `name:port` that port only): a page a DNS-rebinding attacker loads under their own
    name gets 421."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {split_host(check_allowed_host(h)) for h in allowed_hosts}

    def serves(self, host: str) -> bool:
        try:
            name, port = split_host(host)
        except ValueError:
            return False
        return (
            name in LOOPBACK_NAMES or (name, None) in self.allowed or (name, port) in self.allowed
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = Request(scope).headers.get("host")
        if not host:
            response = refusal(400, "the request has no Host header")
        elif not self.serves(host):
            response = refusal(
                421,
                f"this app does not serve the host {host!r}; its operator can allow it with "
                "'benchfoundry review serve --allowed-host NAME'",
            )
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


def _origin_key(scheme: str, netloc: str) -> tuple[str, str, int | None]:
    name, port = split_host(netloc)
    return scheme, name, port or {"http": 80, "https": 443}.get(scheme)


class RequestGuard:
    """A state-changing request must come from the app's own origin (a foreign `Origin`, or
    `Sec-Fetch-Site` cross-site or same-site, gets 403) and be `application/json` (415); every
    request body stays under `max_body` bytes (413), counted as it streams in."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body = max_body

    def refuse(self, scope: Scope) -> Response | None:
        request = Request(scope)
        headers = request.headers
        if scope["method"] in STATE_CHANGING:
            origin = headers.get("origin")
            if origin is not None and not self.same_origin(origin, scope, headers["host"]):
                return refusal(403, f"a request from {origin!r} may not change anything here")
            site = headers.get("sec-fetch-site", "").lower()
            if site in ("cross-site", "same-site"):
                return refusal(403, f"a {site} request may not change anything here")
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return refusal(
                    415,
                    f"a request that changes something sends application/json, not {media or 'nothing'!r}",
                )
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return refusal(413, f"a request body holds at most {self.max_body} bytes")
        return None

    @staticmethod
    def same_origin(origin: str, scope: Scope, host: str) -> bool:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null" (a sandboxed or file page), or something stranger
        try:
            return _origin_key(parts.scheme, parts.netloc) == _origin_key(scope["scheme"], host)
        except ValueError:
            return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refuse(scope)
        if refused is None:
            body, complete = await self.read_body(receive)
            if not complete:
                refused = refusal(413, f"a request body holds at most {self.max_body} bytes")
        if refused is not None:
            await refused(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def read_body(self, receive: Receive) -> tuple[bytes, bool]:
        """The whole body, or (what was read, False) once it passes the limit."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return b"", True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return b"", False
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True


def set_token_cookie(response: Response, token: str, scope: Scope) -> None:
    """The sign-in cookie: http-only, SameSite=Strict, Secure when served over https."""
    secure = scope.get("scheme") == "https"
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure, path="/")


def clear_token_cookie(response: Response, scope: Scope) -> None:
    secure = scope.get("scheme") == "https"
    response.delete_cookie(COOKIE, httponly=True, samesite="strict", secure=secure, path="/")


async def refuse_locked(throttle: Throttle, client: str) -> Response:
    """A locked-out attempt: wait, count it, refuse it (its token is not checked)."""
    await asyncio.sleep(throttle.delay(client))
    throttle.fail(client)
    wait = max(1, round(throttle.window_s))
    return refusal(
        429, "too many bad tokens from this address; wait and try again", {"Retry-After": str(wait)}
    )


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


def _without_token(scope: Scope) -> str:
    """The request's path and query without `token`, as a same-site redirect target."""
    path = "/" + scope.get("raw_path", scope["path"].encode()).decode("latin-1").lstrip("/\\")
    query = [
        (k, v)
        for k, v in parse_qsl(
            scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
        )
        if k != "token"
    ]
    return path + ("?" + urlencode(query) if query else "")


class Authentication:
    """Gives every request its principal (`request.state.principal`) through `access`, or
    refuses it. A token comes as `Authorization: Bearer`, as the sign-in cookie, or (GET only)
    as `?token=`, which is checked, set as the cookie and answered with a 303 to the same
    address without it. Every bad token counts against the client's address in `throttle`."""

    def __init__(
        self,
        app: ASGIApp,
        access: Access,
        throttle: Throttle,
        public: Callable[[str], bool] = _is_public,
        link_page: Callable[[int, str], Response] | None = None,
    ) -> None:
        self.app = app
        self.access = access
        self.throttle = throttle
        self.public = public
        self.link_page = link_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = await self.resolve(scope)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def resolve(self, scope: Scope) -> Response | None:
        """Set the principal in the request's state, or answer in its place."""
        request = Request(scope)
        state: dict[str, Any] = scope.setdefault("state", {})
        state["principal"] = self.access.anonymous
        query_token = (
            request.query_params.get("token") if scope["method"] in ("GET", "HEAD") else None
        )
        if not self.access.checks_tokens:
            return RedirectResponse(_without_token(scope), 303) if query_token is not None else None
        bearer = request.headers.get("authorization", "")
        given, source = None, None
        if query_token is not None:
            given, source = query_token, "query"
        elif bearer.lower().startswith("bearer "):
            given, source = bearer[7:].strip(), "header"
        elif not self.public(scope["path"]) and COOKIE in request.cookies:
            given, source = request.cookies[COOKIE], "cookie"
        if source is None:
            return (
                None if self.public(scope["path"]) or state["principal"] else self.unsigned(scope)
            )
        client = client_address(scope)
        if self.throttle.locked(client):
            refused = await refuse_locked(self.throttle, client)
            return self.for_a_person(scope, source, refused, "locked")
        principal = self.access.authenticate(given or "") if self.access.authenticate else None
        if principal is None:
            self.throttle.fail(client)
            if source == "cookie":
                response = self.unsigned(scope)
                clear_token_cookie(response, scope)
                return response
            return self.for_a_person(scope, source, refusal(401, "that token is not valid"), "bad")
        self.throttle.succeed(client)
        state["principal"] = principal
        if source == "query":
            response = RedirectResponse(_without_token(scope), 303)
            set_token_cookie(response, given or "", scope)
            return response
        return None

    def for_a_person(self, scope: Scope, source: str, refused: Response, why: str) -> Response:
        """A sign-in link's refusal as a page that says what to do, when a browser opened it
        (a page, asked for as HTML); a script, or a client that asks for JSON, keeps `refused`."""
        if source != "query" or self.link_page is None or not wants_html(scope):
            return refused
        page = self.link_page(refused.status_code, why)
        page.headers.update({k: v for k, v in refused.headers.items() if k == "retry-after"})
        return page

    @staticmethod
    def unsigned(scope: Scope) -> Response:
        """A request without a principal: a page goes to the sign-in page, the API gets 401."""
        path = scope["path"]
        if scope["method"] in ("GET", "HEAD") and not path.startswith(("/api/", "/images/")):
            return RedirectResponse("/signin", 303)
        return refusal(
            401, "a token is required: sign in at /signin or send Authorization: Bearer TOKEN"
        )


def wants_html(scope: Scope) -> bool:
    """A browser's request for a page: a GET of a page (not the API, an image or a clip) whose
    `Accept` names HTML before (or without) JSON."""
    if scope["method"] not in ("GET", "HEAD") or scope["path"].startswith(DATA_PREFIXES):
        return False
    accept = Request(scope).headers.get("accept", "").lower()
    html, json_ = accept.find("text/html"), accept.find("application/json")
    return html >= 0 and (json_ < 0 or html < json_)


def secure(
    app: ASGIApp,
    access: Access,
    throttle: Throttle,
    allowed_hosts: Iterable[str] = (),
    max_body: int = MAX_BODY_BYTES,
    link_page: Callable[[int, str], Response] | None = None,
) -> ASGIApp:
    """`app` inside every check above (the headers outermost, so refusals carry them too).
    `link_page(status, why)` is the page a browser gets for a sign-in link that does not work
    (`why`: `bad`, or `locked` after repeated bad tokens)."""
    inner = Authentication(app, access, throttle, link_page=link_page)
    return SecurityHeaders(HostGuard(RequestGuard(inner, max_body), allowed_hosts))
