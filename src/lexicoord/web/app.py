"""The web application: its routes assembled from the modules that serve them, its middleware, and its life.

The app's map (``create_app`` assembles it; each module lists its routes in one function at its end):

- :mod:`lexicoord.web.pages`: ``/`` (create or join a room), ``/r/{code}`` (the room), ``/adapters/{protocol}.js``
  (a protocol's page part); ``/static`` beside them;
- :mod:`lexicoord.web.room_api`: ``/api/offer``, ``POST /api/rooms``, ``GET /api/rooms/{code}``,
  ``POST /api/rooms/{code}/join``, ``/api/rooms/{code}/export.json`` and ``.csv``, and the WebSocket
  ``/ws/{code}`` (:mod:`lexicoord.web.socket`), whose messages are defined in :mod:`lexicoord.web.messages`;
- :mod:`lexicoord.web.viewer`: ``/runs`` and ``/api/runs...`` (the read-only run viewer);
- each part (:class:`AppPart`): a study's pages and API (:mod:`lexicoord.studies.serve`), the gate's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lexicoord.web.errors import Refused
from lexicoord.web.pages import STATIC, page_routes
from lexicoord.web.ratelimit import AddressLimiter
from lexicoord.web.registry import ROOMS_PER_ADDRESS, Rooms
from lexicoord.web.room_api import room_routes
from lexicoord.web.services import Services
from lexicoord.web.viewer import viewer_routes

log = logging.getLogger(__name__)

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


async def _refused(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Refused)
    return JSONResponse({"code": exc.code, "message": exc.message}, status_code=exc.status)


async def _sweep_forever(rooms: Rooms, idle_close: float | None, unused_close: float | None, every: float) -> None:
    """Close, every ``every`` seconds, the rooms left empty too long and those the operator closed."""
    while True:
        await asyncio.sleep(every)
        try:
            await rooms.sweep(idle_close, unused_close)
        except Exception:  # the store is busy or gone: try again next time, keep serving
            log.exception("closing idle rooms failed")


@contextlib.asynccontextmanager
async def _serving(rooms: Rooms, services: Services, parts: Sequence[AppPart], idle_close: float | None,
                   unused_close: float | None, sweep_every: float) -> AsyncIterator[None]:
    """The server's life: the open rooms reopened, the sweeper and the parts started; then everything let go, the
    journal's queued moves written before the store closes."""
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
    app = FastAPI(title="lexicoord live", docs_url=None, redoc_url=None,
                  lifespan=lambda _: _serving(rooms, services, parts, idle_close, unused_close, sweep_every))
    app.state.rooms = rooms
    #: Told as soon as the server begins to stop (:func:`lexicoord.cli.serve_cmd.run_app`).
    app.state.stopping = [part.stopping for part in parts]
    app.state.services = services

    # The app's map: each concern's routes, from the module that serves them.
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(page_routes(services))  # /, /favicon.ico, /r/{code}, /adapters/{protocol}.js
    app.include_router(room_routes(rooms, services, limiter))  # /api/offer, /api/rooms..., /ws/{code}
    if viewer:
        app.include_router(viewer_routes(services.store))  # /runs..., /api/runs... (stored runs, read-only)
    for part in parts:
        part.mount(app, rooms)  # a study's /studies/{name}/..., the gate's ...

    app.add_exception_handler(Refused, _refused)
    if allowed_hosts is not None:
        # Before any route, HTTP and WebSocket alike: a refused WebSocket gets an HTTP 400 handshake reply.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False)
    app.add_middleware(SecurityHeaders)  # outermost: a refused host's answer carries the headers too
    return app
