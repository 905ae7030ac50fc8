"""The review web app: a reviewer's batches, each sample with everything quality control knows
about it, and a decision per sample saved as it is made. Server-rendered pages (Jinja2 with
autoescaping: text from data always shows as text), one script and one stylesheet served by the
app itself (no CDN, no build step), and the JSON API the page and scripts use:

    GET  /api/batches            every batch with its progress
    GET  /api/batches/{id}       one batch: its samples and their current decisions
    POST /api/reviews            one decision (question_id, reviewer, decision, new values...)
    GET  /api/conflicts          questions whose reviewers disagree, with each one's decision
    GET  /batches/{id}           a batch's page;  GET /  the list of batches
    GET  /conflicts              the adjudicator's page (a decision there has adjudication: true)
    GET  /images/{image_id}      a stored image

With a token, every request carries it (`Authorization: Bearer TOKEN`, or `?token=TOKEN` once,
which sets a cookie for the pages)."""

from __future__ import annotations

import hmac
import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    JudgementRecord,
    ReviewBatchRecord,
    ScoredRecord,
)
from benchfoundry.storage.tables import RunFolder

HERE = Path(__file__).parent
REJECT_REASONS = (
    "answer is wrong and cannot be fixed",
    "answerable without the image",
    "ambiguous question or options",
    "image does not show what the question asks",
    "duplicate of another question",
    "offensive or unsafe",
)
MEDIA_TYPES = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
    "TIFF": "image/tiff",
}


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # everything from data is escaped
        undefined=jinja2.StrictUndefined,
    )


class ReviewData:
    """What the pages show, read from the run folder on each request (decisions from other tools
    show up at once)."""

    def __init__(self, run: RunFolder) -> None:
        self.run = run

    def batches(self) -> list[ReviewBatchRecord]:
        return sorted(
            self.run.table(ReviewBatchRecord).records(),
            key=lambda b: (b.reviewer, b.dimension, b.part, b.batch_id),
        )

    def batch(self, batch_id: str) -> ReviewBatchRecord | None:
        return next((b for b in self.batches() if b.batch_id == batch_id), None)

    def dimensions(self) -> list[str]:
        from benchfoundry.decisions.reviews import run_dimensions

        return run_dimensions(self.run)

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        """(media type, bytes) of a stored image, or None."""
        table = self.run.table(ImageRecord).read(columns=["image_id", "format", "bytes"])
        ids = table.column("image_id").to_pylist()
        if image_id not in ids:
            return None
        row = ids.index(image_id)
        fmt, raw = table.column("format")[row].as_py(), table.column("bytes")[row].as_py()
        return MEDIA_TYPES.get(fmt, "application/octet-stream"), raw

    def samples(self, batch: ReviewBatchRecord) -> list[dict[str, Any]]:
        from benchfoundry.decisions.reviews import latest

        wanted = set(batch.question_ids)
        candidates = {
            c.question_id: c
            for c in self.run.table(CandidateRecord).records()
            if c.question_id in wanted
        }
        scored = {
            s.question_id: s
            for s in self.run.table(ScoredRecord).records()
            if s.question_id in wanted
        }
        answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for j in self.run.table(JudgementRecord).records():
            if j.question_id in wanted and j.pass_index == 0:
                chosen = None
                if j.extracted and j.extracted in LETTERS[: len(j.option_order)]:
                    chosen = j.option_order[LETTERS.index(j.extracted)]
                answers[j.question_id].append(
                    {
                        "model": j.model,
                        "mode": j.mode,
                        "answer": chosen,
                        "correct": j.correct,
                        "error": j.error_kind,
                    }
                )
        current = latest(
            r for r in self.run.table_named("reviews").records() if r.question_id in wanted
        )
        out = []
        for qid in batch.question_ids:
            c = candidates.get(qid)
            if c is None:
                continue
            s = scored.get(qid)
            mine = current.get(qid, {}).get(batch.reviewer)
            out.append(
                {
                    "question_id": qid,
                    "image_id": c.image_id,
                    "dimension": c.dimension,
                    "taxonomy_path": " / ".join(
                        x for x in (c.l2_category, c.category, c.dimension) if x
                    ),
                    "question": c.question,
                    "hint": c.hint,
                    "options": [{"letter": LETTERS[i], "text": t} for i, t in enumerate(c.options)],
                    "answer": c.answer,
                    "source": c.source,
                    "generator": c.generator,
                    "meta": dict(c.meta),
                    "decision": s.decision if s else None,
                    "reason": s.reason if s else None,
                    "flags": list(s.flags) if s else [],
                    "difficulty": s.difficulty if s else None,
                    "hits_text": s.hits_text if s else None,
                    "n_text_models": s.n_text_models if s else None,
                    "hits_vlm": s.hits_vlm if s else None,
                    "n_vlm_models": s.n_vlm_models if s else None,
                    "answers": sorted(answers.get(qid, []), key=lambda a: (a["mode"], a["model"])),
                    "review": mine.model_dump(mode="json") if mine else None,
                }
            )
        return out

    def conflicts(self) -> list[dict[str, Any]]:
        """Questions in conflict, each with every person's latest decision."""
        from benchfoundry.decisions.reviews import AUTO, latest, outcome

        current = latest(self.run.table_named("reviews").records())
        candidates = {c.question_id: c for c in self.run.table(CandidateRecord).records()}
        out = []
        for qid, by in sorted(current.items()):
            if outcome(by)[0] != "conflict" or qid not in candidates:
                continue
            c = candidates[qid]
            out.append(
                {
                    "question_id": qid,
                    "image_id": c.image_id,
                    "dimension": c.dimension,
                    "question": c.question,
                    "options": [{"letter": LETTERS[i], "text": t} for i, t in enumerate(c.options)],
                    "answer": c.answer,
                    "decisions": [
                        r.model_dump(mode="json") for name, r in sorted(by.items()) if name != AUTO
                    ],
                }
            )
        return out

    def progress(self, batch: ReviewBatchRecord) -> dict[str, Any]:
        from benchfoundry.decisions.reviews import latest

        current = latest(self.run.table_named("reviews").records())
        decided = sum(1 for q in batch.question_ids if batch.reviewer in current.get(q, {}))
        return {
            "batch_id": batch.batch_id,
            "reviewer": batch.reviewer,
            "dimension": batch.dimension,
            "part": batch.part,
            "cross_check": batch.cross_check,
            "decided": decided,
            "total": len(batch.question_ids),
        }


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(run_root: str | Path, token: str | None = None) -> Starlette:
    """The app over one run folder; `token`, when given, is required on every request."""
    data = ReviewData(RunFolder(run_root))
    env = _environment()

    def allowed(request: Request) -> bool:
        if not token:
            return True
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = (
            given or request.query_params.get("token") or request.cookies.get("review_token") or ""
        )
        return hmac.compare_digest(given.encode(), token.encode())

    def page(name: str, request: Request, **values: Any) -> Response:
        if not allowed(request):
            return HTMLResponse("a token is required (?token=...)", status_code=401)
        response = HTMLResponse(env.get_template(name).render(**values))
        if token and request.query_params.get("token"):
            response.set_cookie("review_token", token, httponly=True, samesite="strict")
        return response

    async def index(request: Request) -> Response:
        return page("index.html", request, batches=[data.progress(b) for b in data.batches()])

    async def batch_page(request: Request) -> Response:
        batch = data.batch(request.path_params["batch_id"])
        if batch is None:
            return HTMLResponse("no such batch", status_code=404)
        return page(
            "batch.html",
            request,
            batch=data.progress(batch),
            samples=data.samples(batch),
            dimensions=data.dimensions(),
            reasons=REJECT_REASONS,
        )

    async def conflicts_page(request: Request) -> Response:
        return page(
            "conflicts.html", request, conflicts=data.conflicts(), dimensions=data.dimensions()
        )

    async def api_conflicts(request: Request) -> Response:
        if not allowed(request):
            return _error(401, "a token is required")
        return JSONResponse({"conflicts": data.conflicts()})

    async def image(request: Request) -> Response:
        if not allowed(request):
            return _error(401, "a token is required")
        wanted = request.path_params["image_id"]
        found = data.image(wanted)
        if found is None:
            return _error(404, f"no image {wanted}")
        media, raw = found
        return Response(raw, media_type=media, headers={"Cache-Control": "max-age=3600"})

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        files = {"review.js": "text/javascript", "review.css": "text/css"}
        if name not in files:
            return _error(404, "no such file")
        return Response((HERE / "static" / name).read_bytes(), media_type=files[name])

    async def api_batches(request: Request) -> Response:
        if not allowed(request):
            return _error(401, "a token is required")
        return JSONResponse({"batches": [data.progress(b) for b in data.batches()]})

    async def api_batch(request: Request) -> Response:
        if not allowed(request):
            return _error(401, "a token is required")
        batch = data.batch(request.path_params["batch_id"])
        if batch is None:
            return _error(404, f"no batch {request.path_params['batch_id']}")
        return JSONResponse({**data.progress(batch), "samples": data.samples(batch)})

    async def api_review(request: Request) -> Response:
        from benchfoundry.decisions.reviews import Decision, ReviewError, record

        if not allowed(request):
            return _error(401, "a token is required")
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body is a JSON object with question_id, reviewer and decision")
        fields = set(Decision.__dataclass_fields__) - {"decided_at"}
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
        try:
            added, _, refused = record(data.run, [decision], "web", data.dimensions())
        except ReviewError as exc:  # pragma: no cover - record collects refusals
            return _error(422, str(exc))
        if refused:
            status = 404 if "no candidate" in refused[0] else 422
            return _error(status, refused[0].split(": ", 1)[1])
        return JSONResponse({"stored": added, "decision": asdict(decision)}, status_code=201)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/batches/{batch_id}", batch_page),
            Route("/conflicts", conflicts_page),
            Route("/api/conflicts", api_conflicts),
            Route("/images/{image_id}", image),
            Route("/static/{name}", static),
            Route("/api/batches", api_batches),
            Route("/api/batches/{batch_id}", api_batch),
            Route("/api/reviews", api_review, methods=["POST"]),
        ]
    )
