"""A room's games, from the leader's start to the stored episode: the game's life, whatever the protocol.

Separate from the room because a game has a life of its own the people and the pages do not share: it is
numbered and saved before it is played, played as any protocol's episode with people in their seats
(:mod:`lexicoord.web.live`: journal, timeouts, interrupts), played again from its journal after a restart,
ended when the leader says so, and stored as an episode of the room's run. :class:`RoomGame` keeps the room's
own record of its games (:class:`~lexicoord.web.room_state.Played`: the adapter's state never holds it) and is
what a live game tells of every move and event (:class:`~lexicoord.web.live.LiveRoom`). It asks the adapter
for the next game and its watcher; everything else it needs of the room is :class:`GameHost`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from lexicoord.core.audience import Viewer
from lexicoord.core.context import EpisodeContext
from lexicoord.core.spec import AgentSpec, EpisodeSpec, Place
from lexicoord.core.takeover import SeatTakenOver
from lexicoord.runs.episode import play_episode
from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.web import messages as m
from lexicoord.web.adapters.base import CurrentGame, GameWatcher, RoomAdapter
from lexicoord.web.errors import RoomError
from lexicoord.web.live import LiveRecorder, LiveSeats
from lexicoord.web.room_state import Managed, Played

if TYPE_CHECKING:
    from lexicoord.core.events import Event
    from lexicoord.core.protocol import Protocol as GameRules
    from lexicoord.core.seat import Request
    from lexicoord.runs.records import EpisodeRecord
    from lexicoord.web.people import Person
    from lexicoord.web.services import Services
    from lexicoord.web.settings import RoomSettings

log = logging.getLogger(__name__)


class GameHost(Protocol):
    """What a room's games need of the room: who it is, its settings and services, its adapter, its lock, the
    seats of the next game, and how to save, show and report a change."""

    id: str
    code: str
    run_id: str
    settings: RoomSettings
    services: Services
    adapter: RoomAdapter
    lock: asyncio.Lock
    managed: Managed | None
    notice: str | None

    def lineup(self) -> list[AgentSpec]: ...
    async def save(self) -> None: ...
    def changed(self) -> None: ...
    async def refresh_stats(self, ended: tuple[EpisodeRecord, list[Event]] | None = None) -> None: ...
    def tell_manager(self) -> None: ...


class RoomGame:
    """The room's record of its games and the game in play: its seats, its task, its context."""

    def __init__(self, room: GameHost) -> None:
        self.room = room
        self.played = Played()
        #: The game being played: its seats (wrapped for the room), people's own seats, its task.
        self.seats: LiveSeats | None = None
        self.humans: dict[str, HumanSeat] = {}
        self.task: asyncio.Task[None] | None = None
        self.number: int | None = None
        self.ended = False
        #: An end asked for after the game in play was numbered and saved but before it was launched: kept for the
        #: launch, so an experimenter's "end" in that moment is not lost (the game would otherwise play on).
        self._stop: str | None = None
        #: A game is saved and about to be launched (between ``begin``'s save and ``launch``): only then is an end
        #: kept for the launch; a launch that failed leaves nothing to end.
        self._launching = False
        #: The game in play (or last played since the server started), for what a person's seat may see.
        self.ctx: EpisodeContext | None = None
        #: Who hears the game in play (the adapter's, from :meth:`RoomAdapter.watch`).
        self.watcher: GameWatcher | None = None
        #: The seats of the game in play that a model took over, by name.
        self.taken: dict[str, SeatTakenOver] = {}

    # ---------------------------------------------------------------------- as a live game reads it
    @property
    def run_id(self) -> str:
        return self.room.run_id

    @property
    def services(self) -> Services:
        return self.room.services

    @property
    def busy(self) -> bool:
        """A game (or a task of the adapter's own phase) is under way: it ends by itself as its moves time out."""
        return self.task is not None and not self.task.done()

    @property
    def clock(self) -> tuple[str | None, int | None]:
        """The phase and round the game in play is in (as its events are stamped), for the pages."""
        if self.ctx is None:
            return None, None
        return self.ctx.recorder.phase, self.ctx.recorder.round

    def seat_viewer(self, person: Person) -> Viewer:
        """Who ``person`` is to the game in play: their seat with its groups (the wolves ...), else only a name."""
        return self.ctx.viewer(person.name) if self.ctx is not None else Viewer(name=person.name)

    def events_for(self, viewer: Viewer) -> list[Event]:
        """The events of the game in play that ``viewer`` may see (for a seat, see :meth:`seat_viewer`)."""
        return self.ctx.recorder.visible_to(viewer) if self.ctx is not None else []

    def seat_request(self, person: Person) -> tuple[HumanSeat, Request] | None:
        """The request ``person``'s seat is waiting to answer, if any."""
        if self.seats is None:
            return None
        seat = self.humans.get(person.name)
        if seat is None or not seat.waiting or seat.pending is None:
            return None
        return seat, seat.pending

    # ---------------------------------------------------------------------------- its life
    def restore(self, played: Played) -> None:
        if played.phase == "playing" and not played.current:  # marked as playing with nothing to play again: over
            played.phase = "over"
        self.played = played

    async def resume(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        """After a restart: an interrupted game is played again from its journal, and a phase of the protocol's
        own is told the room came back (the coordination game's agents propose again)."""
        played = self.played
        if played.phase == "playing" and played.current:
            self.launch(played.current, replay)
        elif played.phase == "own":
            await self.begin(await self.room.adapter.move(None, m.Restarted()))

    async def start(self) -> None:
        """The leader's ``start``: the adapter's next game, or a phase of its own before one."""
        if self.played.phase not in ("lobby", "over"):
            raise RoomError("wrong_phase", "A game is already under way.")
        spec = await self.room.adapter.start(self.played.games + 1, self.room.lineup())
        if spec is None:  # a phase of the protocol's own opened
            self.played.phase = "own"
            await self.room.save()
        await self.begin(spec)

    async def begin(self, spec: EpisodeSpec | None) -> None:
        """Begin the game the adapter gave (the next by number), saved before it is played; nothing if none."""
        if spec is None:
            return
        played = self.played
        played.games += 1
        # Where the game is played is part of its identity: another room (another group of a study) that plays
        # the same item with the same seats plays another episode of the run, never this one.
        managed = self.room.managed
        spec = spec.model_copy(update={"place": Place(
            room=self.room.id, game=played.games, group=managed.group if managed else None,
            condition=managed.condition if managed else None)})
        played.current = CurrentGame(number=played.games, spec=spec, seed=spec.seed(self.room.settings.seed or 0))
        if managed is not None:
            managed.games.append(spec.key)
        played.phase = "playing"
        self.room.notice = None
        self._launching = True
        try:
            await self.room.save()
        except BaseException:
            self._launching = False
            raise
        self.launch(played.current, {})

    async def end(self, person: Person, msg: m.EndGame) -> None:
        """The leader's ``end_game``: the game in play ends at once; a phase of the protocol's own ends unless its
        adapter refuses (or begins a game instead)."""
        played = self.played
        if played.phase == "playing" and self.interrupt("the leader ended the game"):
            return
        if played.phase != "own":
            raise RoomError("wrong_phase", "No game is being played.")
        spec = await self.room.adapter.move(person, msg)
        if spec is None:
            played.phase = "over" if played.games else "lobby"
            await self.room.save()
        await self.begin(spec)

    async def let_go(self, name: str) -> None:
        """``name`` left: their pending move in the game in play ends now, and they no longer count in it."""
        if self.seats is not None and name in self.seats.live:
            await self.seats.live[name].leave(f"{name} left the room")

    async def take_over(self, name: str, model: str, reason: str) -> bool:
        """``model`` plays ``name``'s seat for the rest of the game in play; False if there is no such person's
        seat in play, or it was taken over already."""
        if self.seats is None or not self.busy:
            return False
        seat = self.seats.live.get(name)
        return seat is not None and await seat.take_over(model, reason)

    def interrupt(self, reason: str) -> bool:
        """End the game in play: pending moves end at once and the protocol is told to stop. A game begun (numbered
        and saved) but not launched yet ends as soon as it is launched. False if no game is in play."""
        current = self.played.current
        if self.played.phase != "playing" or current is None:
            return False
        if self.seats is None or self.number != current.number:  # saved, not launched: the launch stops it
            if not self._launching:
                return False
            self._stop = reason
        elif self.task is None or self.task.done():
            return False
        else:
            self.seats.stop(reason)
        self.ended = True
        return True

    def launch(self, current: CurrentGame, replay: dict[str, list[dict[str, Any]]]) -> None:
        # No await from here to the game's task: the end kept for this launch is taken now, and no later game
        # inherits it, whether or not the launch succeeds.
        stop, self._stop, self._launching = self._stop, None, False
        watch = self.room.adapter.watch(current)
        self.watcher = watch.watcher
        self.play(watch.rules, current.spec, current.number, current.seed, replay, stop)

    def play(self, protocol: GameRules[Any, Any, Any], spec: EpisodeSpec, number: int, seed: int,
             replay: dict[str, list[dict[str, Any]]], stop: str | None = None) -> None:
        """Play ``spec`` under ``protocol`` with people in their seats; the adapter hears every step. ``stop``: the
        game was ended before it was launched, for this reason."""
        room = self.room
        settings = room.settings
        seats = {a.name: HumanSeat(a.name, timeout=settings.seat_timeout) for a in spec.lineup if a.kind == "human"}
        for seat in seats.values():
            # A request is shown as it opens; its end is shown by move_done once the journal has the
            # move, so a vote costs one full-room broadcast, not two.
            seat.listener = lambda seat=seat: room.changed() if seat.waiting else None
        self.humans = seats
        self.number = number
        self.ended = stop is not None
        base = SeatFactory(room.services.models, people=seats, own_kinds=protocol.seat_kinds)
        managed = room.managed
        self.taken = {}
        self.seats = LiveSeats(base, self, replay, settings.agent_timeout, takeover=managed is not None,
                               on_idle=managed.model if managed is not None and managed.on_idle else None,
                               agent_options={"temperature": settings.temperature})
        if stop is not None:
            self.seats.stop(stop)
        self.run_task(self._play(protocol, spec, number, seed))

    def run_task(self, coro: Coroutine[Any, Any, None]) -> None:
        self.task = asyncio.create_task(coro)
        self.task.add_done_callback(self._task_done)

    def _over(self) -> None:
        self.played.phase, self.played.current = "over", None

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("room %s: %s", self.room.code, task.exception(), exc_info=task.exception())
            self.room.notice = "The server hit an error in this game; the leader can start the next one."
            # Over for good: not replayed after a restart (its journal stays for the audit).
            self._over()
            asyncio.get_running_loop().create_task(self.room.save())
            self.room.changed()

    async def _play(self, protocol: GameRules[Any, Any, Any], spec: EpisodeSpec, number: int, seed: int) -> None:
        assert self.seats is not None
        room = self.room
        ctx = self.ctx = EpisodeContext(spec=spec, seed=seed, make_seat=self.seats, recorder=LiveRecorder(self),
                                        control=self.seats.control())
        record, events = await play_episode(protocol, ctx, room.run_id, position=number)
        try:
            record.id = await room.services.rooms.call(room.services.store.save_episode, record, events)
            await room.services.rooms.call(room.services.store.set_run_status, room.run_id, "open")
            await room.services.rooms.clear_moves(room.id, number)
        except Exception:  # the store is gone: keep the room up and say so
            log.exception("room %s: game %s could not be saved", room.code, number)
            room.notice = "This game could not be saved; it will be played again after a restart."
            room.changed()
            return
        async with room.lock:
            self._over()
            await room.save()
        await room.refresh_stats((record, events))
        room.changed()
        room.tell_manager()

    # ------------------------------------------------------------------------- what a live game tells
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None:
        if self.watcher is not None:
            self.watcher.move_started(name, kind, round_, deadline, self.clock[0])
        self.room.changed()

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        if self.watcher is not None:
            self.watcher.move_done(name, kind, round_, failure)
        self.room.changed()

    def on_event(self, event: Event) -> None:
        if self.watcher is not None:
            self.watcher.on_event(event)
        self.room.changed()

    def end_requested(self) -> bool:
        return self.ended

    def taken_over(self, event: SeatTakenOver) -> None:
        """A model took a person's seat over: recorded in the game, shown, and told to the study."""
        self.taken[str(event.agent)] = event
        if self.ctx is not None:
            self.ctx.recorder.emit(event)
        self.room.changed()
        self.room.tell_manager()

    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None:
        if self.number is not None:
            await self.room.services.rooms.add_move(self.room.id, self.number, name, idx, entry)
