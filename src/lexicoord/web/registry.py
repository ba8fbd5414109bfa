"""Every open room of the server, by code: created here, reopened here from the store at start-up, and
closed here when it has stood empty too long or the operator closed it (``lexicoord rooms close``).

A closed room is gone from the server and never reopened; its run, with every game played in it, stays
in the store. The caps on rooms (the server's, and each client's share) count open rooms only.

A room nobody has played in is cheap to open and worth nothing left empty, so it is let go much sooner
than one with games: otherwise one client could fill the server with empty rooms and keep it full.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import Any

from pydantic import ValidationError

from lexicoord.web.adapters.base import RoomAdapter
from lexicoord.web.errors import RoomError
from lexicoord.web.ratelimit import address_key
from lexicoord.web.room import Room
from lexicoord.web.room_state import Managed
from lexicoord.web.services import Services
from lexicoord.web.settings import RoomSettings
from lexicoord.web.socket import ROOM_CLOSED
from lexicoord.web.tokens import new_room_code, normalize_code

log = logging.getLogger(__name__)

#: Open rooms a server holds at most (each keeps its people and game in memory).
MAX_ROOMS = 2000
#: Open rooms one client (one IPv4 address, one IPv6 /64) may have created.
ROOMS_PER_ADDRESS = 20
#: Seconds a game under way is given to end and be stored when its room is closed.
CLOSE_GRACE = 10.0


def room_settings(body: dict[str, Any], services: Services) -> tuple[RoomSettings, type[RoomAdapter]]:
    """A creation request checked against the protocol's own settings model (``ValidationError`` if bad)."""
    protocol = body.get("protocol", "coordination")
    adapter = services.adapter(protocol if isinstance(protocol, str) else "")
    return adapter.settings_model.model_validate(body), adapter


class Rooms:
    def __init__(self, services: Services, per_address: int = ROOMS_PER_ADDRESS) -> None:
        self.services = services
        self.per_address = per_address
        self.by_code: dict[str, Room] = {}

    def get(self, code: str) -> Room | None:
        return self.by_code.get(normalize_code(code))

    async def create(self, body: dict[str, Any], creator: str = "unknown", managed: Managed | None = None,
                     run: str | None = None) -> Room:
        """A new room from a creation request by the client ``creator`` (:func:`address_key`), or a study's
        (``managed``: not counted against any client's share; its games go to the study's open ``run``, so one
        report covers every group); ``ValidationError`` or ``ConfigError`` say what is wrong with it,
        ``RoomError`` why it cannot be now."""
        if len(self.by_code) >= MAX_ROOMS:
            raise RoomError("server_full", "This server has as many rooms as it can hold; try again later.")
        creator = address_key(creator) if managed is None else f"study:{managed.study}"
        if managed is None and sum(1 for r in self.by_code.values() if r.creator == creator) >= self.per_address:
            raise RoomError("too_many_rooms", f"Rooms opened from your address are limited to {self.per_address} at "
                                              "a time; use one of them, or wait until an empty one closes.")
        settings, adapter = room_settings(body, self.services)
        settings.check(self.services)
        code = new_room_code()
        while code in self.by_code:
            code = new_room_code()
        room_id = secrets.token_hex(6)
        run_id = run or f"room-{room_id}"
        config = {"room": room_id, **settings.run_config(), "room_settings": settings.model_dump(mode="json")}
        if run is None:
            await self.services.rooms.call(self.services.store.open_run, run_id, adapter.protocol, config, 0)
            await self.services.rooms.call(self.services.store.set_run_status, run_id, "open")
        room = Room(self.services, room_id, code, run_id, settings, adapter)
        room.creator = creator
        room.manage(managed)
        await self.services.rooms.create(room_id, code, run_id, config, room.saved_state())
        self.by_code[code] = room
        await room.refresh_stats()
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
        # Asked first, whatever the task: a game saved but not launched yet (the task is still the last game's)
        # ends as soon as it is launched.
        ended = room.interrupt_game(reason)
        task = room.game.task
        if task is not None and not task.done():
            if not ended:
                task.cancel()  # not a game (manual mode's proposals): nothing to store
            await asyncio.wait({task}, timeout=CLOSE_GRACE)
            if not task.done():
                task.cancel()
        await self.services.rooms.call(self.services.rooms.close_room, room.id)
        code, message = ROOM_CLOSED
        await room.people.close_pages(code, message)
        log.info("room %s closed: %s", room.code, reason)

    async def sweep(self, idle_after: float | None, unused_after: float | None = None) -> list[str]:
        """Close the rooms the store says are closed (the operator's command), and those no one has had open,
        with no game under way, for ``idle_after`` seconds, or for ``unused_after`` seconds if no game was
        ever started in them (the shorter of the two applies to those; None or 0: no such limit). Returns
        the codes closed."""
        rooms = list(self.by_code.values())
        closed = await self.services.rooms.call(self.services.rooms.closed_among, [r.id for r in rooms])
        now = time.monotonic()
        gone = []
        for room in rooms:
            limits = [t for t in (idle_after, None if room.games else unused_after) if t]
            if room.id in closed:
                await self.close(room, "closed by the operator")
            elif limits and room.people.idle_for(now) >= min(limits) and not room.busy:
                await self.close(room, f"no one in it for {min(limits):g} s")
            else:
                continue
            gone.append(room.code)
        return gone

    async def aclose(self) -> None:
        tasks = [room.game.task for room in self.by_code.values() if room.game.task is not None]
        for task in tasks:
            if not task.done():
                task.cancel()
        for task in tasks:
            try:
                await task
            except BaseException:  # noqa: BLE001 - shutting down: the journal keeps the game
                pass
