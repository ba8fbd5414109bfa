"""The rooms over HTTP and WebSocket: what the server offers, creating, finding and joining a room, its
exports, and the WebSocket each browser plays through (:mod:`lexicoord.web.socket`).

Separate from the pages because every call here looks a room up by its code, which costs the client's
budget (:class:`~lexicoord.web.ratelimit.AddressLimiter`: room codes must not be guessed), and because a
study's rooms answer less here (joined through the study's link, exported from its dashboard).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, ValidationError

from lexicoord.errors import LexicoordError
from lexicoord.web.errors import Refused, RoomError
from lexicoord.web.ratelimit import AddressLimiter
from lexicoord.web.registry import Rooms
from lexicoord.web.room import Room
from lexicoord.web.services import Services
from lexicoord.web.socket import play


class JoinRequest(BaseModel):
    name: str = Field(min_length=1, max_length=60)


def client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class RoomApi:
    """The calls on rooms; ``limiter`` holds each client to its rate of look-ups, joins and hellos."""

    def __init__(self, rooms: Rooms, services: Services, limiter: AddressLimiter) -> None:
        self.rooms, self.services, self.limiter = rooms, services, limiter

    def find(self, request: Request, code: str) -> Room:
        """The room with ``code``, for a client within its request rate; :class:`Refused` otherwise."""
        if not self.limiter.allow(client(request)):
            raise Refused(429, "rate_limited", "Too many requests; wait a little.")
        room = self.rooms.get(code)
        if room is None:
            raise Refused(404, "no_room", "No room has this code; check it with whoever invited you.")
        return room

    def exportable(self, request: Request, code: str) -> Room:
        """A room whose games anyone with its code may download: a study's are its experimenter's alone."""
        room = self.find(request, code)
        if room.managed is not None:
            raise Refused(403, "managed", "A study's games are exported from its dashboard.")
        return room

    async def offer(self) -> dict[str, Any]:
        return self.services.offer().model_dump()

    async def create(self, body: dict[str, Any], request: Request) -> JSONResponse:
        """A room for any offered protocol; its settings are checked against that protocol's own model."""
        if not self.limiter.allow(client(request)):
            raise Refused(429, "rate_limited", "Too many requests; wait a little.")
        try:
            room = await self.rooms.create(body, creator=client(request))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
            return JSONResponse({"code": "bad_settings", "message": f"{where}: {first.get('msg', 'invalid')}",
                                 "detail": exc.errors(include_url=False, include_context=False, include_input=False)},
                                status_code=422)
        except RoomError as exc:
            raise Refused(429 if exc.code == "too_many_rooms" else 503, exc.code, str(exc)) from None
        except LexicoordError as exc:
            raise Refused(400, "bad_settings", str(exc)) from None
        return JSONResponse({"code": room.code, "path": f"/r/{room.code}", "run": room.run_id}, status_code=201)

    async def describe(self, code: str, request: Request) -> Any:
        room = self.find(request, code)
        public = room.broadcast.public().model_dump(mode="json")
        return {k: public.get(k) for k in ("code", "protocol", "mode", "phase", "leader", "people", "agents", "games")}

    async def join(self, code: str, body: JoinRequest, request: Request) -> Any:
        room = self.find(request, code)
        if room.managed is not None:
            raise Refused(403, "managed", "A study's room is joined through the study's own link.")
        try:
            person, token = await room.join(body.name)
        except RoomError as exc:
            raise Refused(409 if exc.code != "bad_name" else 400, exc.code, str(exc)) from None
        return {"token": token, "name": person.name, "leader": person is room.leader, "code": room.code}

    async def export_json(self, code: str, request: Request) -> Any:
        room = self.exportable(request, code)
        body = await room.adapter.export("json")
        return JSONResponse(body, headers={"Content-Disposition": f'attachment; filename="{room.run_id}.json"'})

    async def export_csv(self, code: str, request: Request) -> Any:
        room = self.exportable(request, code)
        return Response(await room.adapter.export("csv"), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{room.run_id}.csv"'})

    async def websocket(self, websocket: WebSocket, code: str) -> None:
        await play(websocket, lambda: self.rooms.get(code), self.limiter)


def room_routes(rooms: Rooms, services: Services, limiter: AddressLimiter) -> APIRouter:
    """The rooms' routes: the JSON API and the WebSocket."""
    api = RoomApi(rooms, services, limiter)
    router = APIRouter()
    router.add_api_route("/api/offer", api.offer, methods=["GET"])
    router.add_api_route("/api/rooms", api.create, methods=["POST"])
    router.add_api_route("/api/rooms/{code}", api.describe, methods=["GET"])
    router.add_api_route("/api/rooms/{code}/join", api.join, methods=["POST"])
    router.add_api_route("/api/rooms/{code}/export.json", api.export_json, methods=["GET"])
    router.add_api_route("/api/rooms/{code}/export.csv", api.export_csv, methods=["GET"])
    router.add_api_websocket_route("/ws/{code}", api.websocket)
    return router
