"""The review web app: a reviewer's batches, each sample with everything quality control knows
about it, and a decision per sample saved as it is made. Server-rendered pages (Jinja2 with
autoescaping: text from data always shows as text), one script and one stylesheet served by the
app itself (no CDN, no build step), and the JSON API the page and scripts use:

    GET  /api/batches            every batch with its progress
    GET  /api/batches/{id}       one batch: its samples and their current decisions
                                 (?offset=&limit= for a slice of a long batch)
    POST /api/reviews            one decision (question_id, reviewer, decision, new values...)
    GET  /api/conflicts          questions whose reviewers disagree, oldest first, with each
                                 one's decision and the evidence overlay
    GET  /api/reviewers/{name}   a reviewer's pace, decisions by kind and agreement with others
    GET  /batches/{id}           a batch's page (?page=N, 50 samples a page);  GET /  the batches
    GET  /reviewers/{name}       a reviewer's page
    GET  /conflicts              the adjudicator's queue (a decision there has adjudication: true)
    GET  /images/{image_id}      a stored image (?w=320: a thumbnail that wide)
    GET  /clips/{clip_id}        a stored video clip (byte ranges, so a browser can seek)

    GET  /api/whoami             the principal the request acts as
    GET  /signin, POST /api/signin, POST /api/signout   signing in and out (see `signin`)

Every request passes the checks of `security` first (Host, origin, JSON bodies, size, headers)
and gets its principal from `access`: with a token, every request carries it
(`Authorization: Bearer TOKEN`, the cookie that signing in or `?token=TOKEN` once sets)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from benchfoundry.decisions.store import ReviewStore
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.review.app.access import Access, Throttle
from benchfoundry.tasks.review.app.data import ReviewData
from benchfoundry.tasks.review.app.security import secure
from benchfoundry.tasks.review.app.signin import signin_routes
from benchfoundry.tasks.review.app.thumbnails import (
    ThumbnailCache,
    ThumbnailError,
    parse_width,
    thumbnail,
)

HERE = Path(__file__).parent
REJECT_REASONS = (
    "answer is wrong and cannot be fixed",
    "answerable without the image",
    "ambiguous question or options",
    "image does not show what the question asks",
    "duplicate of another question",
    "offensive or unsafe",
)
PAGE_SIZE = 50  # samples on one page of a batch
THUMBNAIL_WIDTH = 320  # what the pages ask for; the full image loads for the overlay and zoom
STATIC = {
    "review.js": "text/javascript",
    "review.css": "text/css",
    "desk.js": "text/javascript",
    "desk.css": "text/css",
    "queue.js": "text/javascript",
    "session.js": "text/javascript",
}


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # everything from data is escaped
        undefined=jinja2.StrictUndefined,
    )


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _count(request: Request, name: str, least: int) -> int | None:
    """A whole-number query parameter of at least `least`, None when absent, or ValueError
    saying what it takes."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    if not text.isdigit() or int(text) < least:
        raise ValueError(f"{name} is a whole number of at least {least}, not '{text}'")
    return int(text)


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The one range of `bytes=A-B`, `bytes=A-` or `bytes=-N` within `size`, or None (the whole
    body) for no header, several ranges or one that does not parse."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    first_text, _, last_text = header[6:].strip().partition("-")
    try:
        if not first_text:
            return max(0, size - int(last_text)), size - 1
        first = int(first_text)
        last = min(int(last_text), size - 1) if last_text else size - 1
    except ValueError:
        return None
    return (first, last) if 0 <= first <= last else None


def create_app(
    run_root: str | Path,
    token: str | None = None,
    *,
    store: ReviewStore | None = None,
    allowed_hosts: Iterable[str] = (),
    access: Access | None = None,
    throttle: Throttle | None = None,
) -> ASGIApp:
    """The app over one run folder and its review database (`store`, default the run's own),
    inside its security checks. Every request needs a user's token (the database's users and
    roles); `token` instead accepts one shared token as an admin (scripts), `access` any other
    way tokens become principals. `allowed_hosts` are the Host names served beside loopback."""
    if access is not None and token:
        raise ValueError("give a token or an access, not both")
    data = ReviewData(RunFolder(run_root), store)
    if access is None:
        access = Access.for_token(token) if token else Access.for_accounts(data.store)
    throttle = throttle or Throttle()
    env = _environment()
    thumbnails = ThumbnailCache()

    def render(name: str, **values: Any) -> Response:
        signed_in = access.checks_tokens
        return HTMLResponse(env.get_template(name).render(signed_in=signed_in, **values))

    async def index(request: Request) -> Response:
        return render("index.html", batches=data.all_progress(), asked_nothing=data.asked_nothing())

    async def batch_page(request: Request) -> Response:
        batch = data.batch(request.path_params["batch_id"])
        if batch is None:
            return HTMLResponse("no such batch", status_code=404)
        pages = max(1, -(-len(batch.question_ids) // PAGE_SIZE))
        try:
            number = _count(request, "page", 1) or 1
        except ValueError as exc:
            return HTMLResponse(str(exc), status_code=400)
        if number > pages:
            return HTMLResponse(f"no page {number}: the batch has {pages}", status_code=404)
        offset = (number - 1) * PAGE_SIZE
        return render(
            "batch.html",
            batch=data.progress(batch),
            samples=data.samples(batch, offset, PAGE_SIZE),
            page=number,
            pages=pages,
            offset=offset,
            thumbnail_width=THUMBNAIL_WIDTH,
            dimensions=data.media_dimensions(),  # a move stays on its medium
            reasons=REJECT_REASONS,
        )

    async def conflicts_page(request: Request) -> Response:
        return render(
            "conflicts.html",
            me=request.state.principal.name,
            conflicts=data.conflicts(),
            dimensions=data.media_dimensions(),  # a move stays on its medium
            thumbnail_width=THUMBNAIL_WIDTH,
        )

    async def reviewer_page(request: Request) -> Response:
        found = data.reviewer(request.path_params["name"])
        if found is None:
            return HTMLResponse("no decisions or batches for this reviewer", status_code=404)
        return render("reviewer.html", r=found)

    async def api_reviewer(request: Request) -> Response:
        name = request.path_params["name"]
        found = data.reviewer(name)
        if found is None:
            return _error(404, f"no decisions or batches for reviewer '{name}'")
        return JSONResponse(found)

    async def api_conflicts(request: Request) -> Response:
        return JSONResponse({"conflicts": data.conflicts()})

    async def image(request: Request) -> Response:
        wanted = request.path_params["image_id"]
        width_text = request.query_params.get("w")
        try:
            width = None if width_text is None else parse_width(width_text)
        except ThumbnailError as exc:
            return _error(400, str(exc))
        cached = None if width is None else thumbnails.get((wanted, width))
        if cached is None:  # read and resized off the event loop: other requests go on
            found = await run_in_threadpool(data.image, wanted)
            if found is None:
                return _error(404, f"no image {wanted}")
            if width is None:
                cached = found
            else:
                try:
                    cached = await run_in_threadpool(thumbnail, found[1], width)
                except ThumbnailError as exc:
                    return _error(422, str(exc))
                thumbnails.put((wanted, width), cached)
        media, raw = cached
        return Response(raw, media_type=media, headers={"Cache-Control": "max-age=3600"})

    async def clip(request: Request) -> Response:
        found = await run_in_threadpool(data.clip, request.path_params["clip_id"])
        if found is None:
            return _error(404, f"no clip {request.path_params['clip_id']}")
        media, raw = found
        headers = {"Accept-Ranges": "bytes", "Cache-Control": "max-age=3600"}
        wanted = byte_range(request.headers.get("range"), len(raw))
        if wanted is None:
            return Response(raw, media_type=media, headers=headers)
        first, last = wanted
        headers["Content-Range"] = f"bytes {first}-{last}/{len(raw)}"
        return Response(raw[first : last + 1], 206, media_type=media, headers=headers)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return _error(404, "no such file")
        return Response((HERE / "static" / name).read_bytes(), media_type=STATIC[name])

    async def api_batches(request: Request) -> Response:
        return JSONResponse({"batches": data.all_progress()})

    async def api_batch(request: Request) -> Response:
        try:
            offset = _count(request, "offset", 0) or 0
            limit = _count(request, "limit", 1)
        except ValueError as exc:
            return _error(400, str(exc))
        batch = data.batch(request.path_params["batch_id"])
        if batch is None:
            return _error(404, f"no batch {request.path_params['batch_id']}")
        return JSONResponse(
            {
                **data.progress(batch),
                "offset": offset,
                "limit": limit,
                "samples": data.samples(batch, offset, limit),
            }
        )

    async def api_review(request: Request) -> Response:
        from benchfoundry.decisions.reviews import Decision, ReviewError, record

        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body is a JSON object with question_id, reviewer and decision")
        fields = set(Decision.__dataclass_fields__) - {"decided_at"}
        principal = request.state.principal
        body.setdefault("reviewer", principal.name)  # the signed-in user decides
        unknown = set(body) - fields
        if unknown:
            return _error(400, f"unknown field(s) {sorted(unknown)}; known: {sorted(fields)}")
        texts = ("question_id", "reviewer", "decision", "new_answer", "new_question")
        texts += ("new_dimension", "reason", "note", "batch_id")
        wrong = [k for k in texts if body.get(k) is not None and not isinstance(body[k], str)]
        lead = body.get("lead_time_s")
        if lead is not None and (isinstance(lead, bool) or not isinstance(lead, int | float)):
            wrong.append("lead_time_s")
        if wrong:
            return _error(
                400, f"field(s) {wrong} have the wrong type (text, or a number of seconds)"
            )
        try:
            decision = Decision(**body)
        except TypeError as exc:
            return _error(400, str(exc))
        if not isinstance(decision.adjudication, bool):
            return _error(400, "adjudication is true or false")
        if not decision.question_id or not decision.reviewer or not decision.decision:
            return _error(400, "question_id, reviewer and decision are required")
        if decision.new_options is not None and not (
            isinstance(decision.new_options, list)
            and all(isinstance(o, str) for o in decision.new_options)
        ):
            return _error(400, "new_options is a list of texts")
        refused_role = data.refuse(principal, decision)
        if refused_role is not None:
            return _error(*refused_role)
        try:
            added, _, refused = await run_in_threadpool(
                record,
                data.run,
                [decision],
                "web",
                data.media_dimensions(),  # a move stays on its medium
                store=data.store,
                candidates=data.items(),
                role=principal.role,
            )
        except ReviewError as exc:  # pragma: no cover - record collects refusals
            return _error(422, str(exc))
        if refused:
            status = 404 if "no candidate" in refused[0] else 422
            return _error(status, refused[0].split(": ", 1)[1])
        return JSONResponse({"stored": added, "decision": asdict(decision)}, status_code=201)

    async def api_assign(request: Request) -> Response:
        from benchfoundry.decisions.store import StoreError

        principal = request.state.principal
        if principal.role != "admin":
            return _error(403, f"only an admin assigns batches; you are {principal.role}")
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict) or set(body) != {"to"} or not isinstance(body["to"], str):
            return _error(400, 'the body is {"to": "user name"}')
        batch_id = request.path_params["batch_id"]
        try:
            await run_in_threadpool(data.store.assign, batch_id, body["to"], principal.name)
        except StoreError as exc:
            return _error(404 if "no batch" in str(exc) else 422, str(exc))
        return JSONResponse({"batch_id": batch_id, "to": body["to"]})

    async def whoami(request: Request) -> Response:
        principal = request.state.principal
        return JSONResponse({"name": principal.name, "role": principal.role})

    @contextlib.asynccontextmanager
    async def warm_first(_app: Starlette) -> Any:
        data.warm_in_background()
        yield

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/batches/{batch_id}", batch_page),
            Route("/conflicts", conflicts_page),
            Route("/reviewers/{name:path}", reviewer_page),
            Route("/api/reviewers/{name:path}", api_reviewer),
            Route("/api/conflicts", api_conflicts),
            Route("/images/{image_id}", image),
            Route("/clips/{clip_id}", clip),
            Route("/static/{name}", static),
            Route("/api/batches", api_batches),
            Route("/api/batches/{batch_id}", api_batch),
            Route("/api/reviews", api_review, methods=["POST"]),
            Route("/api/batches/{batch_id}/assign", api_assign, methods=["POST"]),
            Route("/api/whoami", whoami),
            *signin_routes(access, throttle, render),
        ],
        lifespan=warm_first,
    )

    def link_refused(status: int, why: str) -> Response:
        page = HTMLResponse(
            env.get_template("link_refused.html").render(signed_in=False, why=why),
            status_code=status,
        )
        return page

    return secure(app, access, throttle, allowed_hosts, link_page=link_refused)
