"""One live room, whatever it plays: its parts composed, and what each person's message may do.

A room is four parts, each in its own module, and this class is where they meet:

- its people, their tokens and pages, and the lead (:class:`~lexicoord.web.people.People`);
- the game's life, numbered, saved, played, replayed, ended and stored (:class:`~lexicoord.web.room_game.RoomGame`);
- what it saves, in a layout older saves are read into (:class:`~lexicoord.web.room_state.RoomState`);
- what its pages are sent (:class:`~lexicoord.web.broadcast.Broadcast`).

Everything a person may do arrives through :meth:`Room.handle` and is checked here or by the protocol's
adapter (:mod:`lexicoord.web.adapters`): who may do it (only the leader starts, ends, lets people go, hands
over the lead), and the adapter checks when and what. Every change is saved before it is shown. The adapter
sees the room only as :class:`~lexicoord.web.adapters.base.RoomView`, which this class implements; the room
calls the adapter only through its six calls. This module imports no protocol: the adapter names the
protocol it plays.

A *managed* room belongs to a study (:mod:`lexicoord.studies`): its games start and end by the study's
schedule, never by a person (every leader's action is refused), and a person who leaves is replaced by a
model for the rest of the game (:meth:`Room.take_over`, and on a timed-out move when the study asks).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, cast
from typing import Protocol as Interface

from lexicoord.core.audience import Viewer
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.web import messages as m
from lexicoord.web.adapters.base import CurrentGame, RoomAdapter, RoomPhase
from lexicoord.web.broadcast import Broadcast
from lexicoord.web.errors import RoomError
from lexicoord.web.people import People, Person
from lexicoord.web.room_game import RoomGame
from lexicoord.web.room_state import Managed, RoomState
from lexicoord.web.settings import RoomSettings
from lexicoord.web.socket import REPLACED

if TYPE_CHECKING:
    from lexicoord.core.events import Event
    from lexicoord.core.seat import Request
    from lexicoord.core.takeover import SeatTakenOver
    from lexicoord.runs.records import EpisodeRecord
    from lexicoord.seats.human import HumanSeat
    from lexicoord.web.connection import Connection
    from lexicoord.web.services import Services


class RoomManager(Interface):
    """Who runs a managed room's schedule (a study): told when a game ends and when a seat is taken over."""

    def room_changed(self, room: Room) -> None: ...


class Room:
    """One live room: see the module's docstring."""

    def __init__(self, services: Services, room_id: str, code: str, run_id: str, settings: RoomSettings,
                 adapter: type[RoomAdapter]) -> None:
        self.services = services
        self.id = room_id
        self.code = code
        self.run_id = run_id
        self.settings = settings
        self.lock = asyncio.Lock()
        #: What the room says to everyone (the lead changed, a person was let go, a game failed).
        self.notice: str | None = None
        #: The client the room was created from (its network), counted against that client's share of rooms.
        self.creator: str | None = None
        #: A study's room: games by its schedule, and people who leave taken over by its model.
        self.managed: Managed | None = None
        self.manager: RoomManager | None = None
        self.people = People()
        self.game = RoomGame(self)
        self.broadcast = Broadcast(self)
        self.adapter = adapter(self)

    # ------------------------------------------------------------------------ saving and restoring
    def saved_state(self) -> dict[str, Any]:
        return RoomState(people=self.people.saved(), leader=self.people.leader_name, played=self.game.played,
                         game=self.adapter.state.model_dump(mode="json"), creator=self.creator,
                         managed=self.managed).model_dump(mode="json")

    def restore(self, saved: dict[str, Any]) -> None:
        state = RoomState.model_validate(saved)
        self.people.restore(state.people, state.leader)
        self.creator = state.creator
        self.manage(state.managed)
        self.game.restore(state.played)
        self.adapter.state = self.adapter.state_model.model_validate(state.game)

    async def save(self) -> None:
        await self.services.rooms.save_state(self.id, self.saved_state)

    def manage(self, managed: Managed | None) -> None:
        """Make the room a study's (or not): its pages then see only its own games of the study's run."""
        self.managed = managed
        if managed is not None:
            from lexicoord.web.own_games import OwnGames, ServicesView

            base = self.services.server if isinstance(self.services, ServicesView) else self.services
            self.services = cast("Services", ServicesView(base, OwnGames(base.store, managed.games)))

    async def resume(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        """After a restart: the game cut short is played again from its journal (see :meth:`RoomGame.resume`)."""
        await self.game.resume(replay)
        await self.refresh_stats()

    # ------------------------------------------------------------------------------------- people
    @property
    def leader(self) -> Person | None:
        return self.people.leader

    def lineup(self) -> list[AgentSpec]:
        """A game's seats: the leader first (Player 1), then the other people present, then the agents."""
        agents = [AgentSpec(name=a.name, model=a.model, options={"temperature": self.settings.temperature})
                  for a in self.settings.agents]
        return self.people.seated() + agents

    async def join(self, name: str, participant: str | None = None) -> tuple[Person, str]:
        """A new person in the room (a study's ``participant``); the first is Player 1, the coalition leader.
        Returns the secret token."""
        return (await self.join_all([(name, participant)]))[0]

    async def join_all(self, people: Sequence[tuple[str, str | None]]) -> list[tuple[Person, str]]:
        """People who join together, in order (a study's group, in seat order: ``(name, participant)``), each
        with their secret token, saved in one write: a group's room opening while a hundred others open waits
        for one commit, not one per seat. A name the room refuses stops the list there; those admitted before
        it are saved and stay."""
        joined: list[tuple[Person, str]] = []
        async with self.lock:
            try:
                for name, participant in people:
                    joined.append(self.people.admit(name, self.settings, participant))
            finally:
                if joined:
                    await self.save()
                    self.changed()
        return joined

    async def reissue(self, name: str) -> str:
        """A new secret token for ``name`` (a study hands it to its participant's page): any older one stops
        working and the pages open with it are closed, so a seat is played from one page at a time."""
        async with self.lock:
            token = self.people.reissue(name)
            await self.save()
        await self.people.close_pages(*REPLACED, person=self.people[name])
        return token

    def connect(self, person: Person, conn: Connection) -> None:
        self.people.connect(person, conn)
        self.changed()

    def disconnect(self, person: Person, conn: Connection) -> None:
        self.people.disconnect(person, conn)
        self.changed()

    # ------------------------------------------------------------------------------------ handling
    async def handle(self, person: Person, msg: m.Inbound) -> None:
        """Act on one validated message from ``person``; :class:`RoomError` if the room refuses it."""
        leads: tuple[type[m.Inbound], ...] = (m.TakeLead, m.Start, m.EndGame, m.Drop, m.HandOver,
                                              *self.adapter.leader_messages)
        if self.managed is not None and isinstance(msg, leads):
            raise RoomError("managed", "In a study, games start and end on the study's schedule.")
        if isinstance(msg, m.TakeLead):
            async with self.lock:
                await self._say(self.people.take_lead(person))
        elif isinstance(msg, leads):
            if person is not self.leader:
                raise RoomError("not_leader", "Only the leader (Player 1) can do that.")
            async with self.lock:
                if isinstance(msg, m.Start):
                    await self.game.start()
                elif isinstance(msg, m.EndGame):
                    await self.game.end(person, msg)
                elif isinstance(msg, m.Drop):
                    await self._drop(msg.name)
                elif isinstance(msg, m.HandOver):
                    await self._say(self.people.hand_over(msg.name))
                else:
                    await self.game.begin(await self.adapter.move(person, msg))
        else:
            await self.game.begin(await self.adapter.move(person, msg))
            return  # a move shows itself through the seat's listener and the journal's move_done
        self.changed()

    async def _drop(self, name: str) -> None:
        self.people.drop(name)
        await self.game.let_go(name)
        await self._say(f"The game goes on without {name}.")

    async def _say(self, notice: str) -> None:
        self.notice = notice
        await self.save()

    # ---------------------------------------------------------------- what a study asks of its room
    async def start_next(self) -> bool:
        """A managed room's next game, begun by its study; False if one is under way already."""
        async with self.lock:
            if self.phase not in ("lobby", "over") or self.busy:
                return False
            await self.game.start()
        self.changed()
        return True

    async def take_over(self, name: str, reason: str) -> bool:
        """A model plays ``name``'s seat for the rest of the game in play (a managed room's, with the study's
        model); False if there is no such person's seat in play, or it was taken over already."""
        return self.managed is not None and await self.game.take_over(name, self.managed.model, reason)

    def tell_manager(self) -> None:
        if self.manager is not None:
            self.manager.room_changed(self)

    @property
    def busy(self) -> bool:
        """A game (or manual mode's proposals) is under way: it ends by itself as its moves time out."""
        return self.game.busy

    @property
    def taken(self) -> dict[str, SeatTakenOver]:
        """The seats of the game in play that a model took over, by name."""
        return self.game.taken

    def interrupt_game(self, reason: str) -> bool:
        """End the game in play: pending moves end at once and the protocol is told to stop."""
        return self.game.interrupt(reason)

    # ------------------------------------------------------------------ the room as its adapter sees it
    @property
    def phase(self) -> RoomPhase:
        return self.game.played.phase

    @property
    def games(self) -> int:
        """Games begun in this room (stored, under way, or cut short)."""
        return self.game.played.games

    @property
    def current(self) -> CurrentGame | None:
        """The game under way, as saved to be played again after a restart."""
        return self.game.played.current

    @property
    def game_spec(self) -> EpisodeSpec | None:
        """The spec of the game in play (or last played since the server started)."""
        return self.game.ctx.spec if self.game.ctx is not None else None

    @property
    def clock(self) -> tuple[str | None, int | None]:
        return self.game.clock

    def seat_request(self, person: Person) -> tuple[HumanSeat, Request] | None:
        return self.game.seat_request(person)

    def seat_viewer(self, person: Person) -> Viewer:
        return self.game.seat_viewer(person)

    def events_for(self, viewer: Viewer) -> list[Event]:
        return self.game.events_for(viewer)

    def run_task(self, coro: Coroutine[Any, Any, None]) -> None:
        self.game.run_task(coro)

    def changed(self) -> None:
        self.broadcast.changed()

    async def refresh_stats(self, ended: tuple[EpisodeRecord, list[Event]] | None = None) -> None:
        """The statistics the adapter keeps (told of the game just stored, if any), sent to every page."""
        self.broadcast.send_stats(await self.adapter.summary(ended))
