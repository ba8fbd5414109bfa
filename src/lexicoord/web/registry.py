"""Every open room of the server, by code: created here, reopened here from the store at start-up, and
closed here when it has stood empty too long or the operator closed it (``lexicoord rooms close``).

A closed room is gone from the server and never reopened; its run, with every game played in it, stays
in the store. The cap on rooms counts open rooms only.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import Any

from pydantic import ValidationError

from lexicoord.core.registry import get_protocol
from lexicoord.errors import ConfigError
from lexicoord.web.adapters.base import RoomAdapter
from lexicoord.web.room import Room, RoomError
from lexicoord.web.services import Services
from lexicoord.web.settings import RoomSettings
from lexicoord.web.socket import ROOM_CLOSED
from lexicoord.web.tokens import new_room_code, normalize_code

log = logging.getLogger(__name__)

#: Open rooms a server holds at most (each keeps its people and game in memory).
MAX_ROOMS = 2000
#: Seconds a game under way is given to end and be stored when its room is closed.
CLOSE_GRACE = 10.0


def adapter_for(protocol: str, services: Services) -> type[RoomAdapter]:
    """The live-room adapter of ``protocol``, if the operator offers it and it has one."""
    if protocol not in services.protocols:
        raise ConfigError(f"This server does not offer '{protocol}' rooms; choose one of: {', '.join(services.protocols)}.")
    entry = get_protocol(protocol)
    if not entry.room:
        raise ConfigError(f"Protocol '{protocol}' cannot be played in a live room.")
    adapter: type[RoomAdapter] = entry.load("room")
    return adapter


def room_settings(body: dict[str, Any], services: Services) -> tuple[RoomSettings, type[RoomAdapter]]:
    """A creation request checked against the protocol's own settings model (``ValidationError`` if bad)."""
    protocol = body.get("protocol", "coordination")
    adapter = adapter_for(protocol if isinstance(protocol, str) else "", services)
    return adapter.settings_model.model_validate(body), adapter


class Rooms:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.by_code: dict[str, Room] = {}

    def get(self, code: str) -> Room | None:
        return self.by_code.get(normalize_code(code))

    async def create(self, body: dict[str, Any]) -> Room:
        """A new room from a creation request; ``ValidationError`` or ``ConfigError`` say what is wrong."""
        if len(self.by_code) >= MAX_ROOMS:
            raise RoomError("server_full", "This server has as many rooms as it can hold; try again later.")
        settings, adapter = room_settings(body, self.services)
        adapter.check(settings, self.services)
        code = new_room_code()
        while code in self.by_code:
            code = new_room_code()
        room_id = secrets.token_hex(6)
        run_id = f"room-{room_id}"
        config = {"room": room_id, **adapter.run_config(settings), "room_settings": settings.model_dump(mode="json")}
        await self.services.rooms.call(self.services.store.open_run, run_id, adapter.protocol, config, 0)
        await self.services.rooms.call(self.services.store.set_run_status, run_id, "open")
        room = Room(self.services, room_id, code, run_id, settings, adapter)
        await self.services.rooms.create(room_id, code, run_id, config, room.saved_state())
        self.by_code[code] = room
        room.adapter.new_run()
        room.stats = await room.adapter.stats()
        return room

    async def restore(self) -> int:
        """Reopen every open room; a game cut short by the restart resumes from its journal."""
        saved = await self.services.rooms.call(self.services.rooms.open_rooms)
        for s in saved:
            try:
                body = dict(s.config["room_settings"])
                body.setdefault("protocol", "coordination")
                settings, adapter = room_settings(body, self.services)
                room = Room(self.services, s.id, s.code, s.run_id, settings, adapter)
                room.restore(s.state)
                self.by_code[s.code] = room
                await room.resume(s.moves)
            except (Exception, ValidationError):  # one unreadable room must not keep the others closed
                log.exception("room %s could not be reopened", s.code)
        return len(self.by_code)

    async def close(self, room: Room, reason: str) -> None:
        """Close ``room``: no one finds it any more, a game under way ends (and is stored, as when the leader
        ends it), the store marks it closed, and every open page is told why."""
        if self.by_code.get(room.code) is not room:
            return
        del self.by_code[room.code]
        task = room.task
        if task is not None and not task.done():
            if not room.interrupt_game(reason):
                task.cancel()  # not a game (manual mode's proposals): nothing to store
            await asyncio.wait({task}, timeout=CLOSE_GRACE)
            if not task.done():
                task.cancel()
        await self.services.rooms.call(self.services.rooms.close_room, room.id)
        code, message = ROOM_CLOSED
        await room.close_connections(code, message)
        log.info("room %s closed: %s", room.code, reason)

    async def sweep(self, idle_after: float | None) -> list[str]:
        """Close the rooms the store says are closed (the operator's command), and those no one has had open
        for ``idle_after`` seconds with no game under way; returns their codes."""
        rooms = list(self.by_code.values())
        closed = await self.services.rooms.call(self.services.rooms.closed_among, [r.id for r in rooms])
        now = time.monotonic()
        gone = []
        for room in rooms:
            if room.id in closed:
                await self.close(room, "closed by the operator")
            elif idle_after and room.idle_for(now) >= idle_after and not room.busy:
                await self.close(room, f"no one in it for {idle_after:g} s")
            else:
                continue
            gone.append(room.code)
        return gone

    async def aclose(self) -> None:
        for room in self.by_code.values():
            if room.task is not None and not room.task.done():
                room.task.cancel()
        for room in self.by_code.values():
            if room.task is not None:
                try:
                    await room.task
                except BaseException:  # noqa: BLE001 - shutting down: the journal keeps the game
                    pass
