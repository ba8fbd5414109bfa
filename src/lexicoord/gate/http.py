"""The gate over HTTP: a JSON API for the pipeline that asks, and a page for the person who answers.

The API (``Authorization: Bearer KEY`` when the server has a key, :func:`decide_key`):

- ``POST /api/gate/check`` ``{instruction, context?, candidates?, key?, timeout?, wait_s?}``: the :class:`Verdict`
  (200), or ``202`` with the verdict as it stands (``pending``) and ``Location: /api/gate/{id}`` when the models
  take longer than ``wait_s`` seconds (default 30, at most 300);
- ``POST /api/gate/{id}/answer`` ``{choice?, text?, refuse?, wait_s?}``: the person's answer, the new verdict
  (again 202 while it is ``pending``);
- ``GET /api/gate/{id}``: the verdict as it stands; ``GET /api/gate/{id}/events``: server-sent events, one
  ``data: VERDICT`` per change, ending once the verdict is final.

The person's page is ``answer_path`` (``/g/{id}?t=TOKEN``): it needs the check's token, never the key, and
reads a reduced view (``GET /g/{id}/state?t=``: no token, no run, no seats) and answers with
``POST /g/{id}/answer?t=``. A wrong or missing token is 403 with nothing of the check; an unknown check 404.

Every failure is an error status with ``{"detail": ...}`` (a :class:`GateError` its own status, a body that
does not validate 422, a body over :data:`MAX_BODY` bytes 413), never a verdict, let alone ``clear``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response, Security
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware

from lexicoord.gate import records
from lexicoord.gate.gate import AnswerRequest, CheckRequest, Gate, GateError, GateInputError
from lexicoord.gate.records import FINAL, GateState
from lexicoord.gate.verdict import Ambiguity, Clarification, Status, Verdict
from lexicoord.web.app import SECURITY_HEADERS, SecurityHeaders
from lexicoord.web.ratelimit import AddressLimiter

STATIC = Path(__file__).parent / "static"
#: The page's files, by the name it asks for (``/gate-static/NAME``); nothing else is served from disk.
ASSETS = {"gate.js": (STATIC / "gate.js", "text/javascript"), "gate.css": (STATIC / "gate.css", "text/css"),
          "dom.js": (Path(__file__).parents[1] / "web" / "static" / "dom.js", "text/javascript")}
#: Bytes a request body may have (the longest check allowed is some 24,000 characters of JSON).
MAX_BODY = 64 * 1024
#: What the person's page says of an ``error`` (its reason is for the pipeline's operator, not the link's holder).
PAGE_ERROR = "The check could not be completed; nothing will be done. Its operator has the details."
#: Requests a second per client: the API's (a pipeline's bursts of checks) and the person's page's.
API_RATE = 50.0
PAGE_RATE = 5.0
#: Seconds a caller waits for a verdict by default, and at most.
WAIT = 30.0
MAX_WAIT = 300.0
#: Seconds the page's answer waits for the verdict it leads to (the page then polls).
PAGE_WAIT = 20.0
#: Seconds between two comments on a quiet event stream (so a proxy does not close it as idle).
KEEPALIVE = 15.0
#: The environment variable that names the API key (any bind); without it a bind off loopback makes one.
KEY_ENV = "LEXICOORD_GATE_KEY"
#: How the API's key is sent (and shown in the OpenAPI schema); checked by the routes, not by this.
BEARER = HTTPBearer(auto_error=False, description="The gate's key: LEXICOORD_GATE_KEY, or the one the server printed.")
NOT_YOURS = "This link is not valid (its token is missing or wrong): ask whoever sent it for the link again."
NO_GATE = "No such check: ask whoever sent the link for a new one."


class CheckBody(CheckRequest):
    """``POST /api/gate/check``: a check (the same limits as :meth:`Gate.check`) and how long to wait for it."""

    wait_s: float = Field(default=WAIT, ge=0, le=MAX_WAIT,
                          description="Seconds to wait for a verdict other than pending; then 202 and Location.")


class AnswerBody(AnswerRequest):
    """``POST /api/gate/{id}/answer``: an option, a free text, or both; or ``refuse``."""

    wait_s: float = Field(default=WAIT, ge=0, le=MAX_WAIT,
                          description="Seconds to wait for the verdict the answer leads to; then 202 and Location.")


class PageView(BaseModel):
    """What the person's page reads: the check as the person needs it, and nothing of the server's."""

    status: Status
    instruction: str
    context: str
    question: str | None
    #: The question's number, sent back with the answer (an answer meant for it never lands on a later one).
    asked: int | None = None
    options: list[str]
    ambiguity: Ambiguity
    interpretation: str | None
    reason: str | None
    expires_at: float | None
    #: The questions already put to the person and what they said.
    answered: list[Clarification]


def page_view(verdict: Verdict, state: GateState) -> PageView:
    """The page's view of ``verdict`` (the context is the check's own, from its stored request)."""
    return PageView(status=verdict.status, instruction=verdict.instruction,
                    context=str(state.request.get("spec", {}).get("item", {}).get("context") or ""),
                    question=verdict.question if verdict.status == "ask" else None, asked=verdict.asked,
                    options=verdict.options if verdict.status == "ask" else [], ambiguity=verdict.ambiguity,
                    interpretation=verdict.interpretation, expires_at=verdict.expires_at,
                    # an error's reason may name a model server or quote a prompt: the page holder reads a sentence
                    reason=PAGE_ERROR if verdict.status == "error" else verdict.reason,
                    answered=verdict.clarifications)


class _Forbidden(GateError):
    status = 403


class _TooLarge(GateError):
    status = 413


class _NoGate(GateError):
    status = 404


def detail(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status, headers={"Cache-Control": "no-store"})


async def _read_capped(request: Request) -> None:
    """Read the body, refusing one over :data:`MAX_BODY` bytes before more than that is read (413), and one that
    is not UTF-8 text (422: binary data is no request, and FastAPI would answer it 400)."""
    size = request.headers.get("content-length")
    too_large = _TooLarge(f"A request body may have at most {MAX_BODY // 1024} KiB.")
    if size is not None and (not size.strip().isdigit() or int(size) > MAX_BODY):
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise too_large
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        raise GateInputError("The request body is not JSON (UTF-8 text); binary data is no request.") from None
    request._body = bytes(body)  # what FastAPI then parses, instead of reading the stream again


class GateRoute(APIRoute):
    """A gate route: its body capped before it is read, a :class:`GateError` answered as its status and
    ``{"detail": message}``, and no answer kept by a cache (a verdict holds the page's token)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                if request.method in ("POST", "PUT", "PATCH"):
                    await _read_capped(request)
                response = await handler(request)
            except GateError as exc:
                return detail(exc.status, str(exc))
            response.headers.setdefault("Cache-Control", "no-store")
            return response

        return guarded


def _pending(verdict: Verdict, response: Response) -> Verdict:
    """A verdict still ``pending`` is 202, with where to ask for it again."""
    if verdict.status == "pending":
        response.status_code = 202
        response.headers["Location"] = f"/api/gate/{verdict.gate_id}"
    return verdict


async def _events(gate: Gate, gate_id: str) -> AsyncIterator[str]:
    """Each verdict the check goes through as an event, a comment when quiet, until the verdict is final."""
    stream = gate.watch(gate_id)
    step: asyncio.Future[Verdict] = asyncio.ensure_future(anext(stream))
    try:
        while True:
            done, _ = await asyncio.wait({step}, timeout=KEEPALIVE)
            if not done:
                yield ": deciding\n\n"
                continue
            try:
                verdict = step.result()
            except StopAsyncIteration:
                return
            except GateError as exc:
                yield f"event: error\ndata: {json.dumps({'detail': str(exc)})}\n\n"
                return
            yield f"data: {verdict.model_dump_json()}\n\n"
            if verdict.status in FINAL:
                return
            step = asyncio.ensure_future(anext(stream))
    finally:
        if step.done():  # the generator rests at a yield (or has ended): close it
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing()
        else:  # the generator is running in the step: cancelling it ends the generator
            step.cancel()
            step.add_done_callback(lambda f: f.cancelled() or f.exception())


def gate_routes(gate: Gate, *, key: str | None, api_rate: float = API_RATE, page_rate: float = PAGE_RATE) -> APIRouter:
    """The API (behind ``key`` as a bearer token, when one is given) and the person's page, for ``gate``.

    Each client (an IPv4 address, an IPv6 /64) may send ``api_rate`` API requests a second (bursts of ten
    seconds' worth) and ``page_rate`` page requests a second: a pipeline's bursts pass, a token guesser does not."""
    api_limit = AddressLimiter(api_rate, api_rate * 10)
    page_limit = AddressLimiter(page_rate, page_rate * 10)

    def limited(limiter: AddressLimiter) -> Callable[[Request], None]:
        def check(request: Request) -> None:
            if not limiter.allow(request.client.host if request.client else "unknown"):
                raise HTTPException(429, "Too many requests from this address; wait a moment.",
                                    headers={"Retry-After": "1"})
        return check

    def require_key(credentials: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]) -> None:
        given = credentials.credentials if credentials is not None else ""
        if key is not None and not hmac.compare_digest(given.encode(), key.encode()):
            raise HTTPException(401, "This gate needs its key: Authorization: Bearer KEY.",
                                headers={"WWW-Authenticate": "Bearer"})

    errors: dict[int | str, dict[str, Any]] = {
        401: {"description": "No key, or the wrong one"}, 404: {"description": "No such check"},
        409: {"description": "A key reused for another request, or an answer to a check that asks nothing"},
        413: {"description": "Body too large"}, 429: {"description": "Too many requests"}, 422: {"description": "A request that does not validate"}}
    api = APIRouter(prefix="/api/gate", route_class=GateRoute, tags=["gate"], responses=errors,
                    dependencies=[Depends(limited(api_limit)), *([Depends(require_key)] if key is not None else [])])
    pending: dict[int | str, dict[str, Any]] = {202: {"model": Verdict, "description": "Still deciding (status pending); ask Location again"}}

    @api.post("/check", response_model=Verdict, responses=pending)
    async def check(body: CheckBody, response: Response) -> Verdict:
        """Check an instruction; act only when the verdict's status is ``clear``."""
        verdict = await gate.check(body.instruction, context=body.context, candidates=body.candidates,
                                   key=body.key, timeout=body.timeout, wait=body.wait_s)
        return _pending(verdict, response)

    @api.post("/{gate_id}/answer", response_model=Verdict, responses=pending)
    async def answer(gate_id: str, body: AnswerBody, response: Response) -> Verdict:
        """The person's answer to an ``ask`` verdict's question (or ``refuse``)."""
        verdict = await gate.answer(gate_id, choice=body.choice, text=body.text, refuse=body.refuse,
                                    question=body.question, wait=body.wait_s)
        return _pending(verdict, response)

    @api.get("/{gate_id}", response_model=Verdict)
    async def get(gate_id: str) -> Verdict:
        """The verdict as it stands."""
        return await gate.get(gate_id)

    @api.get("/{gate_id}/events", response_class=StreamingResponse,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "One `data: VERDICT` per change, until the verdict is final"}})
    async def events(gate_id: str) -> StreamingResponse:
        """Server-sent events: the verdict now, then each change, until it is final."""
        await gate.get(gate_id)  # an unknown check is a 404 now, not a broken stream
        return StreamingResponse(_events(gate, gate_id), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    page = APIRouter(route_class=GateRoute, include_in_schema=False, dependencies=[Depends(limited(page_limit))])

    async def holder(gate_id: str, token: str | None) -> GateState:
        """The check whose token the page holds: 404 if there is no such check, 403 if the token is not its."""
        if len(gate_id) > 64:
            raise _NoGate(NO_GATE)

        def look() -> tuple[GateState | None, bool]:
            state = records.get(gate.store, gate_id)
            if state is None or state.run_id != gate.run_id:
                return None, False
            return state, bool(token) and len(token or "") <= 200 and gate.token_ok(gate_id, token or "")

        state, ok = await asyncio.to_thread(look)
        if state is None:
            raise _NoGate(NO_GATE)
        if not ok:
            raise _Forbidden(NOT_YOURS)
        return state

    @page.get("/g/{gate_id}")
    async def page_html(gate_id: str, t: str | None = None) -> Response:
        try:
            await holder(gate_id, t)
        except GateError as exc:  # a person reads this one: a sentence, not JSON
            return PlainTextResponse(str(exc), status_code=exc.status, headers={"Cache-Control": "no-store"})
        return FileResponse(STATIC / "gate.html", headers={**SECURITY_HEADERS, "Cache-Control": "no-store"})

    @page.get("/g/{gate_id}/state")
    async def page_state(gate_id: str, t: str | None = None) -> PageView:
        state = await holder(gate_id, t)
        return page_view(await gate.get(gate_id), state)

    @page.post("/g/{gate_id}/answer")
    async def page_answer(gate_id: str, body: AnswerRequest, t: str | None = None) -> PageView:
        state = await holder(gate_id, t)
        verdict = await gate.answer(gate_id, choice=body.choice, text=body.text, refuse=body.refuse,
                                    question=body.question, wait=PAGE_WAIT)
        return page_view(verdict, state)

    @page.get("/gate-static/{name}")
    async def asset(name: str) -> Response:
        if name not in ASSETS:
            raise HTTPException(404, "No such file.")
        path, media_type = ASSETS[name]
        return FileResponse(path, media_type=media_type, headers={"Cache-Control": "no-cache"})

    router = APIRouter()
    router.include_router(api)
    router.include_router(page)
    return router


class GatePart:
    """The gate as a part of ``lexicoord serve``'s app (:class:`lexicoord.web.app.AppPart`): its routes, its MCP
    server over streamable HTTP at ``/mcp`` (when the ``mcp`` extra is installed; behind the same key as the
    API), and its checks stopped when the server stops (their journals stay; the next start resumes them when
    asked)."""

    def __init__(self, gate: Gate, *, key: str | None) -> None:
        self.gate, self.key = gate, key
        self._mcp: Any = None
        self._lifespan: contextlib.AbstractAsyncContextManager[Any] | None = None

    def mount(self, app: FastAPI, rooms: object) -> None:
        app.state.gate = self.gate
        app.include_router(gate_routes(self.gate, key=self.key))
        try:
            from mcp.server.transport_security import TransportSecuritySettings

            from lexicoord.gate.mcp_server import streamable_http_app
        except ImportError:  # the extra is not installed: the gate is served over HTTP alone
            return
        # The app already answers only its allowed host names (``lexicoord serve --allowed-host``).
        self._mcp = streamable_http_app(
            self.gate, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        app.mount("/mcp", BearerOnly(self._mcp, self.key))

    async def start(self) -> None:
        await self.gate.resume_unsettled()
        if self._mcp is not None:  # Starlette runs no mounted app's lifespan: the MCP sessions' manager
            self._lifespan = self._mcp.router.lifespan_context(self._mcp)
            await self._lifespan.__aenter__()

    def stopping(self) -> None:
        return None

    async def stop(self) -> None:
        if self._lifespan is not None:
            await self._lifespan.__aexit__(None, None, None)
            self._lifespan = None
        await self.gate.aclose()


class BearerOnly:
    """An ASGI app behind the gate's key (``Authorization: Bearer KEY``, compared in constant time)."""

    def __init__(self, app: Any, key: str | None) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.key is not None and scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"").decode("latin-1")
            token = given[7:] if given.lower().startswith("bearer ") else ""
            if not hmac.compare_digest(token.encode(), self.key.encode()):
                response = JSONResponse({"detail": "This gate needs its key: Authorization: Bearer KEY."},
                                        status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def gate_app(gate: Gate, *, key: str | None, allowed_hosts: list[str] | None = None) -> FastAPI:
    """An app serving the gate alone (``lexicoord gate serve``): its routes, the OpenAPI schema at
    ``/openapi.json``, the web app's security headers, and only ``allowed_hosts`` answered (when given)."""

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await gate.resume_unsettled()
        try:
            yield
        finally:
            await gate.aclose()

    app = FastAPI(title="lexicoord gate", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.gate = gate
    app.include_router(gate_routes(gate, key=key))
    if allowed_hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False)
    app.add_middleware(SecurityHeaders)
    return app


def loopback_only(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine alone."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def decide_key(host: str, *, proxied: bool = False, public_names: bool = False) -> tuple[str | None, bool]:
    """The API key for a server bound to ``host``, and whether it was made now (to be printed once):
    :data:`KEY_ENV` when set; else none on loopback reached by loopback names only, a random one otherwise (a
    loopback server behind a proxy, or answering a public host name, is reached from elsewhere)."""
    named = os.environ.get(KEY_ENV, "").strip()
    if named:
        return named, False
    if loopback_only(host) and not proxied and not public_names:
        return None, False
    return secrets.token_urlsafe(32), True
