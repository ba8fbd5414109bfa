"""Every room of the server, by code: created here, and reopened here from the store at start-up."""

from __future__ import annotations

import logging
import secrets

from lexicoord.errors import ConfigError
from lexicoord.web.history import RoomRecord
from lexicoord.web.room import Room, RoomError
from lexicoord.web.services import Services
from lexicoord.web.settings import RoomSettings
from lexicoord.web.tokens import new_room_code, normalize_code

log = logging.getLogger(__name__)

MAX_ROOMS = 2000


class Rooms:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.by_code: dict[str, Room] = {}

    def get(self, code: str) -> Room | None:
        return self.by_code.get(normalize_code(code))

    async def create(self, settings: RoomSettings) -> Room:
        if len(self.by_code) >= MAX_ROOMS:
            raise RoomError("server_full", "This server has as many rooms as it can hold; try again later.")
        self.services.dataset(settings.dataset)
        unknown = sorted({a.model for a in settings.agents} - set(self.services.model_names))
        if unknown:
            raise ConfigError(f"Model {unknown[0]} is not offered by this server; choose one of: "
                              f"{', '.join(self.services.model_names)}.")
        code = new_room_code()
        while code in self.by_code:
            code = new_room_code()
        room_id = secrets.token_hex(6)
        run_id = f"room-{room_id}"
        config = {"room": room_id, "mode": settings.mode, "dataset": settings.dataset,
                  "lineup": [a.model_dump() for a in settings.agents], "settings": settings.game_settings(),
                  "room_settings": settings.model_dump(mode="json")}
        await self.services.rooms.call(self.services.store.open_run, run_id, "coordination", config, 0)
        await self.services.rooms.call(self.services.store.set_run_status, run_id, "open")
        room = Room(self.services, room_id, code, run_id, settings)
        await self.services.rooms.create(room_id, code, run_id, config, room.saved_state())
        self.by_code[code] = room
        room.record = RoomRecord(settings.clarification_bound)  # a new run has no games to read
        room.stats = room.record.stats()
        return room

    async def restore(self) -> int:
        """Reopen every open room; a game cut short by the restart resumes from its journal."""
        saved = await self.services.rooms.call(self.services.rooms.open_rooms)
        for s in saved:
            try:
                settings = RoomSettings.model_validate(s.config["room_settings"])
                room = Room(self.services, s.id, s.code, s.run_id, settings)
                room.restore(s.state)
                self.by_code[s.code] = room
                await room.resume(s.moves)
            except Exception:  # one unreadable room must not keep the others closed
                log.exception("room %s could not be reopened", s.code)
        return len(self.by_code)

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
