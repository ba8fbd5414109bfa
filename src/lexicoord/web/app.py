"""The web application: pages, a small JSON API, and the WebSocket each browser plays through.

HTTP: ``/`` (create or join a room), ``/r/{code}`` (the room), ``/api/offer``,
``POST /api/rooms``, ``GET /api/rooms/{code}``, ``POST /api/rooms/{code}/join``,
``/api/rooms/{code}/export.json`` and ``.csv``; ``/runs`` and ``/api/runs...`` (the read-only run
viewer, :mod:`lexicoord.web.viewer`). WebSocket: ``/ws/{code}``
(:mod:`lexicoord.web.socket`), whose messages are defined in :mod:`lexicoord.web.messages`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, ValidationError
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lexicoord.errors import LexicoordError
from lexicoord.web.errors import RoomError
from lexicoord.web.ratelimit import AddressLimiter
from lexicoord.web.registry import ROOMS_PER_ADDRESS, Rooms
from lexicoord.web.room import Room
from lexicoord.web.services import Services
from lexicoord.web.socket import play
from lexicoord.web.viewer import viewer_routes

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"

#: Seconds a room may stand with no page open (and no game under way) before it closes; 0 or None: never.
IDLE_CLOSE = 3600.0
#: The same for a room no game was ever started in (nobody joined, or nobody played): much shorter.
UNUSED_CLOSE = 600.0
#: Seconds between looks for rooms to close.
SWEEP_EVERY = 30.0

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # room codes are in the path
    "X-Frame-Options": "DENY",
}
#: A room page may be framed by this server's own pages (a study shows its game inside its own page).
ROOM_PAGE_HEADERS = {
    "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"].replace("frame-ancestors 'none'",
                                                                                   "frame-ancestors 'self'"),
    "X-Frame-Options": "SAMEORIGIN",
}


class SecurityHeaders:
    """Every HTTP response's security headers, added as a plain ASGI middleware: Starlette's function
    middleware costs a task group and a stream per request, a fifth of a request's time under a burst.

    It also says how long the server took (``Server-Timing: app;dur=MS``, from the request reaching the app to
    its answer starting), which a browser's developer tools and a load test read to tell the server's time
    from the network's and their own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.plain = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        room = {**SECURITY_HEADERS, **ROOM_PAGE_HEADERS}
        self.room = [(k.lower().encode(), v.encode()) for k, v in room.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self.room if scope["path"].startswith("/r/") else self.plain
        names = {k for k, _ in extra}
        began = time.perf_counter()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                took = f"app;dur={(time.perf_counter() - began) * 1000:.1f}".encode()
                message = {**message, "headers": [*kept, *extra, (b"server-timing", took)]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class AppPart(Protocol):
    """More of the app beside the rooms (a study): its routes, and what it does when the server starts and stops.

    ``start`` runs once the open rooms are reopened (so a study finds its groups' rooms); ``stopping`` as soon
    as the server begins to stop (before it waits for requests in flight: a long poll should answer now, and
    pages that lose their connection are not people leaving); ``stop`` before the rooms are closed."""

    def mount(self, app: FastAPI, rooms: Rooms) -> None: ...
    async def start(self) -> None: ...
    def stopping(self) -> None: ...
    async def stop(self) -> None: ...


class JoinRequest(BaseModel):
    name: str = Field(min_length=1, max_length=60)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status)


class Refused(Exception):
    """An HTTP request turned down with a status, a code and a sentence (answered as JSON)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


async def _sweep_forever(rooms: Rooms, idle_close: float | None, unused_close: float | None, every: float) -> None:
    """Close, every ``every`` seconds, the rooms left empty too long and those the operator closed."""
    while True:
        await asyncio.sleep(every)
        try:
            await rooms.sweep(idle_close, unused_close)
        except Exception:  # the store is busy or gone: try again next time, keep serving
            log.exception("closing idle rooms failed")


def create_app(services: Services, *, http_rate: float = 2.0, http_burst: float = 30.0,
               allowed_hosts: Sequence[str] | None = None, idle_close: float | None = IDLE_CLOSE,
               unused_close: float | None = UNUSED_CLOSE, rooms_per_address: int = ROOMS_PER_ADDRESS,
               sweep_every: float = SWEEP_EVERY, parts: Sequence[AppPart] = (), viewer: bool = True) -> FastAPI:
    """The app for ``services``.

    ``http_rate`` (per second, bursts of ``http_burst``) limits room look-ups, joins and WebSocket hellos
    per client (an IPv4 address, an IPv6 /64). ``parts`` add their routes and run beside the rooms; without
    ``viewer`` the stored runs are not served (a study's participants must not read other groups' games).
    ``allowed_hosts`` are the only Host names answered, on HTTP
    and WebSocket alike (``lexicoord serve`` always passes them; None leaves the check to whatever serves
    the app). A room no one has open for ``idle_close`` seconds, with no game under way, closes; one no game
    was ever started in, after ``unused_close`` seconds. A client may have ``rooms_per_address`` open rooms.
    """
    rooms = Rooms(services, per_address=rooms_per_address)
    limiter = AddressLimiter(http_rate, http_burst)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        count = await rooms.restore()
        if count:
            log.info("reopened %d rooms", count)
        sweeper = asyncio.create_task(_sweep_forever(rooms, idle_close, unused_close, sweep_every))
        for part in parts:
            await part.start()
        try:
            yield
        finally:
            for part in parts:
                await part.stop()
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            await rooms.aclose()
            # Moves already accepted and queued for the journal are written before the store closes, so the
            # next start replays them rather than asking again (their games' tasks are cancelled by now).
            await services.rooms.flushed()
            await services.models.aclose()
            services.rooms.close()

    app = FastAPI(title="lexicoord live", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.rooms = rooms
    #: Told as soon as the server begins to stop (:func:`lexicoord.cli.serve_cmd.run_app`).
    app.state.stopping = [part.stopping for part in parts]
    app.state.services = services
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    if viewer:
        app.include_router(viewer_routes(services.store))  # stored runs, read-only (lexicoord.web.viewer)
    if allowed_hosts is not None:
        # Before any route, HTTP and WebSocket alike: a refused WebSocket gets an HTTP 400 handshake reply.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False)
    app.add_middleware(SecurityHeaders)  # outermost: a refused host's answer carries the headers too

    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message)


    def client(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    def find(request: Request, code: str) -> Room:
        """The room with ``code``, for a client within its request rate; :class:`Refused` otherwise."""
        if not limiter.allow(client(request)):
            raise Refused(429, "rate_limited", "Too many requests; wait a little.")
        room = rooms.get(code)
        if room is None:
            raise Refused(404, "no_room", "No room has this code; check it with whoever invited you.")
        return room

    def exportable(request: Request, code: str) -> Room:
        """A room whose games anyone with its code may download: a study's are its experimenter's alone."""
        room = find(request, code)
        if room.managed is not None:
            raise Refused(403, "managed", "A study's games are exported from its dashboard.")
        return room

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/r/{code}", include_in_schema=False)
    async def room_page(code: str) -> FileResponse:
        return FileResponse(STATIC / "room.html")

    @app.get("/adapters/{protocol}.js", include_in_schema=False)
    async def adapter_script(protocol: str) -> FileResponse:
        """The page's part for a protocol this server offers (never a path: only a registered adapter's file)."""
        try:
            script = services.adapter(protocol).script
        except LexicoordError:
            script = None
        if script is None:
            raise Refused(404, "no_adapter", f"No page for '{protocol}' rooms on this server.")
        return FileResponse(script, media_type="text/javascript")

    @app.get("/api/offer")
    async def offer() -> dict[str, Any]:
        return services.offer().model_dump()

    @app.post("/api/rooms")
    async def create(body: dict[str, Any], request: Request) -> JSONResponse:
        """A room for any offered protocol; its settings are checked against that protocol's own model."""
        if not limiter.allow(client(request)):
            return _error(429, "rate_limited", "Too many requests; wait a little.")
        try:
            room = await rooms.create(body, creator=client(request))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
            return JSONResponse({"code": "bad_settings", "message": f"{where}: {first.get('msg', 'invalid')}",
                                 "detail": exc.errors(include_url=False, include_context=False, include_input=False)},
                                status_code=422)
        except RoomError as exc:
            return _error(429 if exc.code == "too_many_rooms" else 503, exc.code, str(exc))
        except LexicoordError as exc:
            return _error(400, "bad_settings", str(exc))
        return JSONResponse({"code": room.code, "path": f"/r/{room.code}", "run": room.run_id}, status_code=201)

    @app.get("/api/rooms/{code}")
    async def describe(code: str, request: Request) -> Any:
        room = find(request, code)
        public = room.public().model_dump(mode="json")
        return {k: public.get(k) for k in ("code", "protocol", "mode", "phase", "leader", "people", "agents", "games")}

    @app.post("/api/rooms/{code}/join")
    async def join(code: str, body: JoinRequest, request: Request) -> Any:
        room = find(request, code)
        if room.managed is not None:
            return _error(403, "managed", "A study's room is joined through the study's own link.")
        try:
            person, token = await room.join(body.name)
        except RoomError as exc:
            return _error(409 if exc.code != "bad_name" else 400, exc.code, str(exc))
        return {"token": token, "name": person.name, "leader": person is room.leader, "code": room.code}

    @app.get("/api/rooms/{code}/export.json")
    async def export_json(code: str, request: Request) -> Any:
        room = exportable(request, code)
        body = await room.adapter.export("json")
        return JSONResponse(body, headers={"Content-Disposition": f'attachment; filename="{room.run_id}.json"'})

    @app.get("/api/rooms/{code}/export.csv")
    async def export_csv(code: str, request: Request) -> Any:
        room = exportable(request, code)
        return Response(await room.adapter.export("csv"), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{room.run_id}.csv"'})

    @app.websocket("/ws/{code}")
    async def websocket(websocket: WebSocket, code: str) -> None:
        await play(websocket, lambda: rooms.get(code), limiter)

    for part in parts:
        part.mount(app, rooms)
    return app
