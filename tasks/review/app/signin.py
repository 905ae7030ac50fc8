"""Signing in and out of the review app: `GET /signin` (a form; the static script posts it as
JSON), `POST /api/signin` with `{"token": ...}` (sets the http-only sign-in cookie), and
`POST /api/signout` (clears it). Bad tokens count against the client's address like any other."""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from benchfoundry.tasks.review.app.access import Access, Throttle
from benchfoundry.tasks.review.app.security import (
    clear_token_cookie,
    client_address,
    refusal,
    refuse_locked,
    set_token_cookie,
)


def signin_routes(
    access: Access, throttle: Throttle, render: Callable[[str], Response]
) -> list[Route]:
    """The three routes; `render(name)` renders a page template."""

    async def signin_page(request: Request) -> Response:
        if not access.checks_tokens:
            return RedirectResponse("/", 303)  # an open app has nothing to sign in to
        return render("signin.html")

    async def signin(request: Request) -> Response:
        if not access.checks_tokens or access.authenticate is None:
            return refusal(400, "this app is open on loopback: it takes no token")
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return refusal(400, "the body is not JSON")
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            return refusal(400, 'the body is {"token": "..."}')
        client = client_address(request.scope)
        if throttle.locked(client):
            return await refuse_locked(throttle, client)
        principal = access.authenticate(token)
        if principal is None:
            throttle.fail(client)
            return refusal(401, "that token is not valid")
        throttle.succeed(client)
        response = JSONResponse({"name": principal.name, "role": principal.role})
        set_token_cookie(response, token, request.scope)
        return response

    async def signout(request: Request) -> Response:
        response = JSONResponse({"signed_out": True})
        clear_token_cookie(response, request.scope)
        return response

    return [
        Route("/signin", signin_page),
        Route("/api/signin", signin, methods=["POST"]),
        Route("/api/signout", signout, methods=["POST"]),
    ]
