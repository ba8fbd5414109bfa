"""A study served beside the rooms: what the server needs for it, and its part of the app.

The rooms' services are the study's alone: its protocol, its models, its items. The run viewer is left
out (a participant must not read another group's games), and so are the room exports (a study's games
are exported from its dashboard); the study's one run holds every group's games for ``lexicoord report``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from lexicoord.models.pool import ModelPool
from lexicoord.runs.store import Store
from lexicoord.studies.calls import ParticipantCalls
from lexicoord.studies.dashboard import dashboard_routes
from lexicoord.studies.file import StudyFile
from lexicoord.studies.persistence import StudyStore
from lexicoord.studies.study import Study
from lexicoord.studies.web import STATIC, ParticipantApi, api_base, participant_routes
from lexicoord.web.ratelimit import AddressLimiter
from lexicoord.web.registry import Rooms
from lexicoord.web.services import Services


def services_for(file: StudyFile, store: Store, pool: ModelPool) -> Services:
    """The rooms' services for ``file``: its protocol, its models (each checked now), and its items (the file's
    ``[items]``, else the protocol's default), each set read and checked now."""
    from lexicoord.core.items import load_items

    for name in file.models():
        pool.get(name)  # a missing key or an unknown provider is one clear error before the server starts
    services = Services(store=store, models=pool, model_names=file.models(), protocols=[file.protocol],
                        items=load_items([file.protocol], named={file.protocol: file.items}))
    services.adapter(file.protocol)
    return services


def open_run(file: StudyFile, services: Services) -> None:
    """The study's run, opened once (its config as a room's run has it, so the protocol's report reads it)."""
    from lexicoord.web.registry import room_settings

    def config_of(condition: str | None) -> tuple[dict[str, Any], str]:
        agents = [(a.name, a.model) for a in file.agents(condition)]
        settings, adapter = room_settings(file.room_body(agents, condition), services)
        settings.check(services)  # what the protocol's room needs (COGENT's items ...) is one error now, not per group
        return {**settings.run_config(), "room_settings": settings.model_dump(mode="json")}, adapter.protocol

    own, protocol = config_of(None)
    config: dict[str, Any] = {"study": file.name, **own}
    if file.conditions:  # each condition's settings, as its report reads them (lexicoord report splits by condition)
        config["conditions"] = {c.name: config_of(c.name)[0] for c in file.conditions}
    services.store.open_run(file.run_id, protocol, config, 0, grows=("conditions",))
    services.store.set_run_status(file.run_id, "open")


class StudyPart:
    """The study's routes and schedule, as a part of the rooms' app (:class:`lexicoord.web.app.AppPart`)."""

    def __init__(self, file: StudyFile, services: Services, key: str, public: bool,
                 enter_rate: float = 5.0, enter_burst: float = 60.0, accept_changes: bool = False) -> None:
        self.services = services
        self.study = Study(file, StudyStore(services.store, file.name))
        self.key, self.public = key, public
        self.enter_rate, self.enter_burst = enter_rate, enter_burst
        self.study.load(accept_changes)
        open_run(file, services)
        self.study.adopt_file()  # a changed file is the study's only once its run has taken it too
        self.rooms: Rooms | None = None

    def mount(self, app: FastAPI, rooms: Rooms) -> None:
        self.rooms = rooms
        # /studies/{name}/ and /api/studies/{name}/...: the participant's page and calls
        api = ParticipantApi(self.study, AddressLimiter(self.enter_rate, self.enter_burst))
        app.include_router(participant_routes(api))
        # The same calls answered before the app's routing (inside its host check and security headers): under
        # a burst, matching every route and solving parameters cost more than the calls themselves.
        app.add_middleware(ParticipantCalls, api=api, base=api_base(self.study))
        # /studies/{name}/admin and /api/studies/{name}/admin/...: the experimenter's
        app.include_router(dashboard_routes(self.study, self.services.store, self.key, self.public))
        app.mount("/study-static", StaticFiles(directory=STATIC), name="study-static")  # the two pages' files

    async def start(self) -> None:
        assert self.rooms is not None
        await self.study.start(self.rooms)

    def stopping(self) -> None:
        self.study.stopping()

    async def stop(self) -> None:
        await self.study.stop()
        self.study.store.close()
