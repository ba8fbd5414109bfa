"""The web application: pages, a small JSON API, and the WebSocket each browser plays through.

HTTP: ``/`` (create or join a room), ``/r/{code}`` (the room), ``/api/offer``,
``POST /api/rooms``, ``GET /api/rooms/{code}``, ``POST /api/rooms/{code}/join``,
``/api/rooms/{code}/export.json`` and ``.csv``. WebSocket: ``/ws/{code}``, whose
messages are defined in :mod:`lexicoord.web.messages`.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, ValidationError
from starlette.websockets import WebSocketDisconnect

from lexicoord.errors import LexicoordError
from lexicoord.web import messages as m
from lexicoord.web.connection import Connection
from lexicoord.web.ratelimit import AddressLimiter, TokenBucket
from lexicoord.web.registry import Rooms, adapter_for
from lexicoord.web.room import Room, RoomError
from lexicoord.web.services import Services

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"

#: Messages per second a connection may send, and how many it may save up.
WS_RATE, WS_BURST = 10.0, 30.0
#: A connection that keeps flooding after this many refusals is closed.
WS_STRIKES = 50

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # room codes are in the path
    "X-Frame-Options": "DENY",
}


class JoinRequest(BaseModel):
    name: str = Field(min_length=1, max_length=60)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status)


class Refused(Exception):
    """An HTTP request turned down with a status, a code and a sentence (answered as JSON)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error_text(code: str, message: str) -> str:
    return json.dumps({"type": "error", "code": code, "message": message}, ensure_ascii=False)


def create_app(services: Services, *, http_rate: float = 2.0, http_burst: float = 30.0) -> FastAPI:
    """The app for ``services``; ``http_rate`` limits room look-ups and joins per client address."""
    rooms = Rooms(services)
    limiter = AddressLimiter(http_rate, http_burst)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        count = await rooms.restore()
        if count:
            log.info("reopened %d rooms", count)
        try:
            yield
        finally:
            await rooms.aclose()
            await services.models.aclose()
            services.rooms.close()

    app = FastAPI(title="lexicoord live", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.rooms = rooms
    app.state.services = services
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    def client(request: Request | WebSocket) -> str:
        return request.client.host if request.client else "unknown"

    def find(request: Request, code: str) -> Room:
        """The room with ``code``, for a client within its request rate; :class:`Refused` otherwise."""
        if not limiter.allow(client(request)):
            raise Refused(429, "rate_limited", "Too many requests; wait a little.")
        room = rooms.get(code)
        if room is None:
            raise Refused(404, "no_room", "No room has this code; check it with whoever invited you.")
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
            script = adapter_for(protocol, services).script
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
            room = await rooms.create(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
            return JSONResponse({"code": "bad_settings", "message": f"{where}: {first.get('msg', 'invalid')}",
                                 "detail": exc.errors(include_url=False, include_context=False, include_input=False)},
                                status_code=422)
        except RoomError as exc:
            return _error(503, exc.code, str(exc))
        except LexicoordError as exc:
            return _error(400, "bad_settings", str(exc))
        return JSONResponse({"code": room.code, "path": f"/r/{room.code}", "run": room.run_id}, status_code=201)

    @app.get("/api/rooms/{code}")
    async def describe(code: str, request: Request) -> Any:
        room = find(request, code)
        public = room.public()
        return {k: public.get(k) for k in ("code", "protocol", "mode", "phase", "leader", "people", "agents", "games")}

    @app.post("/api/rooms/{code}/join")
    async def join(code: str, body: JoinRequest, request: Request) -> Any:
        room = find(request, code)
        try:
            person, token = await room.join(body.name)
        except RoomError as exc:
            return _error(409 if exc.code != "bad_name" else 400, exc.code, str(exc))
        return {"token": token, "name": person.name, "leader": person is room.leader, "code": room.code}

    @app.get("/api/rooms/{code}/export.json")
    async def export_json(code: str, request: Request) -> Any:
        room = find(request, code)
        body = await room.adapter.export_json()
        return JSONResponse(body, headers={"Content-Disposition": f'attachment; filename="{room.run_id}.json"'})

    @app.get("/api/rooms/{code}/export.csv")
    async def export_csv(code: str, request: Request) -> Any:
        room = find(request, code)
        return Response(await room.adapter.export_csv(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{room.run_id}.csv"'})

    @app.websocket("/ws/{code}")
    async def play(websocket: WebSocket, code: str) -> None:
        origin = websocket.headers.get("origin")
        host = websocket.headers.get("host")
        if origin and host and origin.split("://", 1)[-1] != host:
            await websocket.close(code=4403)  # another site's page must not play in our rooms
            return
        room = rooms.get(code)
        if room is None:
            limiter.allow(client(websocket))  # guesses count against the address
            await websocket.close(code=4404)
            return
        await websocket.accept()
        await serve_connection(room, websocket)

    return app


async def serve_connection(room: Room, websocket: WebSocket) -> None:
    """One browser for as long as it stays: authenticate, then validate and act on each message."""
    conn = Connection(websocket)
    bucket = TokenBucket(WS_RATE, WS_BURST)
    person = None
    strikes = 0
    close_code: int | None = None
    try:
        while True:
            frame = await websocket.receive()
            if frame["type"] == "websocket.disconnect":
                break
            text = frame.get("text")
            if not bucket.take():
                strikes += 1
                conn.send(_error_text("rate_limited", "Too many messages; this one was dropped."))
                if strikes > WS_STRIKES:
                    close_code = 1008
                    break
                continue
            if text is None:
                conn.send(_error_text("bad_message", "Send JSON text, not binary frames."))
                continue
            try:
                msg = m.parse(text, room.adapter.messages)
            except m.BadMessage as exc:
                conn.send(_error_text(exc.code, str(exc)))
                if exc.code == "too_large":
                    close_code = 1009
                    break
                continue
            if isinstance(msg, m.Hello):
                found = room.person_for(msg.token)
                if found is None:
                    conn.send(_error_text("bad_token", "This token belongs to no one in this room; join again."))
                    close_code = 4401
                    break
                if person is not None and person is not found:
                    room.disconnect(person, conn)
                person = found
                room.connect(person, conn)
                conn.send(json.dumps({"type": "welcome", "name": person.name, "leader": person is room.leader}))
                if room.stats is not None:
                    conn.send(json.dumps({"type": "stats", **room.stats}, ensure_ascii=False))
                conn.send_state(room.state_for(person))
                continue
            if person is None:
                conn.send(_error_text("not_authenticated", "Say hello with your token first."))
                continue
            if isinstance(msg, m.Ping):
                conn.send('{"type":"pong"}')
                continue
            try:
                await room.handle(person, msg)
            except RoomError as exc:
                conn.send(_error_text(exc.code, str(exc)))
            except LexicoordError as exc:
                conn.send(_error_text("refused", str(exc)))
    except WebSocketDisconnect:
        pass
    finally:
        if person is not None:
            room.disconnect(person, conn)
        if close_code is not None:
            await conn.flush()
            with contextlib.suppress(Exception):
                await websocket.close(code=close_code)
        await conn.aclose()
