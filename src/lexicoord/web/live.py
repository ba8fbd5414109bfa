"""Any protocol, unchanged, bound to a live room: its seats and its end signal wrapped, never its rules.

:class:`LiveSeat` wraps each seat the protocol asks for and adds what a room
needs around every request, whatever the protocol:

- it tells the room when a seat starts and finishes a move (who has moved,
  never what), so pages update as answers arrive;
- a model seat that does not answer within the room's limit fails its move,
  so a slow or broken agent never freezes a round;
- the leader ending the game, or letting a person go, interrupts moves at once;
- a person's seat may be taken over by a model for the rest of the game (a study's dropout: gone past a
  grace period, or idle past the move's limit): the request they were being asked is answered by the
  model, the change is journalled and recorded as a :class:`~lexicoord.core.takeover.SeatTakenOver` event;
- every answer is written to the room's journal before the game goes on
  (:class:`~lexicoord.seats.journal.JournaledSeat`, which campaigns use too). After
  a restart the same game is played again with the journal answering for every
  request already answered (with the model calls it cost), so it resumes exactly
  where it stopped and no move is lost or asked twice.

:class:`LiveControl` journals the game's "should it end now?" checks the same
way, so a replayed game ends exactly where it ended before.

:class:`LiveRecorder` passes every event to the room as it happens, and to the
store, which keeps what a spectator may see of the game in progress (its public
events; :meth:`~lexicoord.runs.store.Store.keep_live`), so the run viewer shows
the game while it is played. When the game ends the room stores it whole, as
before, in that same episode row.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from lexicoord.core.context import Control, EpisodeContext, SeatMaker
from lexicoord.core.events import Event
from lexicoord.core.recorder import Recorder
from lexicoord.core.seat import Answer, Request, Seat, SeatInfo
from lexicoord.core.spec import AgentSpec
from lexicoord.core.takeover import SeatTakenOver
from lexicoord.runs.store import LiveGame, LiveWrite
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.journal import JournaledSeat

if TYPE_CHECKING:
    from lexicoord.web.services import Services

#: The journal's name for the game's end checks (seat names cannot start with '#').
CONTROL = "#control"
#: The journal's name for when a person left the game: ``#left:<seat>``.
LEFT = "#left:"
#: The journal's name for when a model took a person's seat over: ``#taken:<seat>``.
TAKEN = "#taken:"


class RoomHooks(Protocol):
    """What a live game tells its room, and asks it."""

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None: ...
    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None: ...
    def on_event(self, event: Event) -> None: ...
    def end_requested(self) -> bool: ...
    def taken_over(self, event: SeatTakenOver) -> None: ...
    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None: ...


class LiveRoom(RoomHooks, Protocol):
    """A room as its game's recorder reads it: the run and the game being played, and the store's writer."""

    @property
    def run_id(self) -> str: ...
    @property
    def number(self) -> int | None: ...
    @property
    def ctx(self) -> EpisodeContext | None: ...
    @property
    def services(self) -> Services: ...


class LiveSeat(JournaledSeat):
    """A :class:`~lexicoord.seats.journal.JournaledSeat` in a room: the journal is the room's, and the live
    ask tells the room when a move starts and ends, keeps to the room's limit and stops when told."""

    def __init__(self, inner: Seat, hooks: RoomHooks, replay: list[dict[str, Any]], timeout: float | None,
                 left_after: int | None = None, agent: Callable[[str], Seat] | None = None,
                 agent_timeout: float | None = None, on_idle: str | None = None,
                 taken: dict[str, Any] | None = None) -> None:
        super().__init__(inner, replay, hooks.record_move)
        self.hooks = hooks
        self.timeout = timeout
        self.absent = False
        self.stop = asyncio.Event()
        self.stop_reason = ""
        #: From the journal: the person left once this many requests had been answered.
        self.left_after = left_after
        #: Builds the model seat that may take a person's seat over (None: this seat is never taken over).
        self.agent = agent
        self.agent_timeout = agent_timeout
        #: The model that takes over a person who lets a move time out (None: a timeout is only a failed move).
        self.on_idle = on_idle
        #: The takeover (``after``, ``model``, ``reason``), once it happened (from the journal after a restart).
        self.taken: dict[str, Any] | None = None
        self._pending_takeover = taken
        self.handover = asyncio.Event()
        #: The person's own seat, once a model plays it.
        self.person: Seat | None = None
        self._taking = False
        self._left_if_due()
        self._taken_if_due()

    @property
    def present(self) -> bool:
        return not self.absent

    def interrupt(self, reason: str, *, leave: bool = False) -> None:
        """End this seat's current and future moves: the game was ended, or the person left."""
        self.stop_reason = reason
        self.absent = self.absent or leave
        self.stop.set()

    async def leave(self, reason: str) -> None:
        """The person left the game: journalled first (with how many requests they had been given), so a
        replay after a restart stops counting them at the same point."""
        await self.hooks.record_move(f"{LEFT}{self.name}", 0, {"kind": "left", "after": self.calls,
                                                                "reason": reason})
        self.interrupt(reason, leave=True)

    def _left_if_due(self) -> None:
        if self.left_after is not None and self.calls >= self.left_after and not self.absent:
            self.interrupt(f"{self.name} left the room", leave=True)

    async def take_over(self, model: str, reason: str) -> bool:
        """A model plays this person's seat from now on, the request they are being asked included. Journalled
        first (after how many requests), so a replay after a restart hands the seat over at the same point.
        False if the seat is no person's, has no agent to hand over to, or was taken over already."""
        if self.agent is None or self.taken is not None or self._pending_takeover is not None \
                or self._taking or not isinstance(self.inner, HumanSeat):
            return False
        self._taking = True  # before the journal's await: a second caller (idle and away at once) stops above
        entry = {"kind": "taken", "after": self.calls, "model": model, "reason": reason}
        await self.hooks.record_move(f"{TAKEN}{self.name}", 0, entry)
        if self.taken is None:
            self._swap(entry)
        return True

    def _taken_if_due(self) -> None:
        due = self._pending_takeover
        if due is not None and self.calls >= int(due["after"]):
            self._pending_takeover = None
            self._swap(due)

    def describe(self) -> SeatInfo:
        """The seat as the game's record lists it: a person's seat stays a person's after a model took it over
        (the ``seat_taken_over`` event says from when), as the line-up has it."""
        return self.person.describe() if self.person is not None else self.inner.describe()

    def _swap(self, entry: dict[str, Any]) -> None:
        assert self.agent is not None
        self.person = self.inner
        self.inner = self.agent(str(entry["model"]))
        self.timeout = self.agent_timeout
        self.taken = entry
        self.handover.set()
        self.hooks.taken_over(SeatTakenOver(agent=self.name, by=str(entry["model"]), reason=str(entry["reason"]),
                                            after_moves=int(entry["after"])))

    def _deadline(self) -> float | None:
        if self.timeout is not None:
            return time.time() + self.timeout
        if isinstance(self.inner, HumanSeat) and self.inner.timeout:
            return time.time() + self.inner.timeout
        return None

    def on_replayed(self, request: Request, answer: Answer) -> None:
        self.hooks.move_started(self.name, request.kind, request.round, None)  # shown as made
        self.hooks.move_done(self.name, request.kind, request.round, answer.failure)
        self._left_if_due()
        self._taken_if_due()

    def on_answered(self, request: Request, answer: Answer) -> None:
        self.hooks.move_done(self.name, request.kind, request.round, answer.failure)

    def on_failed(self, request: Request, error: str) -> None:
        self.hooks.move_done(self.name, request.kind, request.round, error)

    async def ask(self, request: Request) -> Answer:
        """The seat's answer within the room's limit, or a failed move when the game is ended or the seat left."""
        if self.stop.is_set():
            return Answer(failure=self.stop_reason)
        self._taken_if_due()  # a takeover journalled before the crash, whose model had not answered yet
        self.hooks.move_started(self.name, request.kind, request.round, self._deadline())
        person = isinstance(self.inner, HumanSeat) and self.taken is None
        task = asyncio.ensure_future(self.inner.answer(request))
        stopper = asyncio.ensure_future(self.stop.wait())
        waits = {task, stopper}
        if person:
            waits.add(asyncio.ensure_future(self.handover.wait()))
        try:
            done, _ = await asyncio.wait(waits, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()  # the room is shutting down: the journal keeps every finished move
            raise
        finally:
            for waiter in waits - {task}:
                waiter.cancel()
        if task in done and not (person and self.taken is not None):
            answer = task.result()
            if person and self.on_idle and getattr(self.inner, "timed_out", False):
                await self.take_over(self.on_idle, "idle")
                if self._taking and self.taken is None:  # the study took it over at the same moment
                    await self.handover.wait()
                if self.taken is not None:
                    return await self.ask(request)  # the model answers the request the person let time out
            return answer
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if person and self.taken is not None and not self.stop.is_set():
            return await self.ask(request)  # taken over while asked: the model answers instead
        return Answer(failure=self.stop_reason if self.stop.is_set() else f"no answer within {self.timeout:g} s")


class LiveControl(Control):
    """The room's end request, asked through the journal so that a replay ends where the game did."""

    def __init__(self, hooks: RoomHooks, replay: list[dict[str, Any]]) -> None:
        self.hooks = hooks
        self.replay = [e for e in replay if "end" in e]
        self.calls = 0

    async def should_end(self) -> bool:
        idx = self.calls
        self.calls += 1
        if idx < len(self.replay):
            return bool(self.replay[idx]["end"])
        end = self.hooks.end_requested()
        await self.hooks.record_move(CONTROL, idx, {"kind": "end", "end": end})
        return end


class LiveSeats:
    """Fills a room game's seats as any run would (``base``), then wraps each in a :class:`LiveSeat`."""

    def __init__(self, base: SeatMaker, hooks: RoomHooks, replay: dict[str, list[dict[str, Any]]],
                 agent_timeout: float, *, takeover: bool = False, on_idle: str | None = None,
                 agent_options: dict[str, Any] | None = None) -> None:
        self.base = base
        self.hooks = hooks
        self.replay = replay
        self.agent_timeout = agent_timeout
        #: People's seats may be taken over by a model (a study's rooms); ``on_idle``: by this model on a timeout.
        self.takeover = takeover
        self.on_idle = on_idle
        self.agent_options = agent_options or {}
        self.live: dict[str, LiveSeat] = {}
        #: Why the game was ended, once it is: a seat made after that (a protocol may make its seats as it
        #: goes) is made ended too, rather than waiting out its timeout.
        self.stopped: str | None = None

    def stop(self, reason: str) -> None:
        """The game is ended: every seat's pending and later moves end at once."""
        self.stopped = reason
        for seat in self.live.values():
            seat.interrupt(reason)

    def __call__(self, spec: AgentSpec, ctx: EpisodeContext, system_prompt: str | None) -> Seat:
        inner = self.base(spec, ctx, system_prompt)
        person = isinstance(inner, HumanSeat)
        timeout = None if person else self.agent_timeout
        left = self.replay.get(f"{LEFT}{spec.name}")
        taken = self.replay.get(f"{TAKEN}{spec.name}")

        def agent(model: str) -> Seat:
            """The model seat in this person's place, made as any model seat of the game is."""
            stand_in = AgentSpec(name=spec.name, kind="llm", model=model, role=spec.role, options=self.agent_options)
            return self.base(stand_in, ctx, system_prompt)

        seat = LiveSeat(inner, self.hooks, self.replay.get(spec.name, []), timeout,
                        left_after=int(left[0]["after"]) if left else None,
                        agent=agent if person and self.takeover else None, agent_timeout=self.agent_timeout,
                        on_idle=self.on_idle if person else None, taken=taken[0] if taken and person else None)
        self.live[spec.name] = seat
        if self.stopped is not None:
            seat.interrupt(self.stopped)
        return seat

    def control(self) -> LiveControl:
        return LiveControl(self.hooks, self.replay.get(CONTROL, []))


class LiveRecorder(Recorder):
    """Records as usual, passes every event on to the room as it happens, and queues it for the store (never
    waited for: the store keeps the public ones, and the game's end stores them all)."""

    def __init__(self, hooks: LiveRoom) -> None:
        super().__init__()
        self.hooks = hooks
        self.game: LiveGame | None = None

    def emit(self, event: Event) -> Event:
        super().emit(event)
        self.hooks.on_event(event)
        self._keep(event)
        return event

    def _keep(self, event: Event) -> None:
        start = self.game is None
        if self.game is None:
            ctx, number = self.hooks.ctx, self.hooks.number
            if ctx is None or ctx.recorder is not self or number is None:
                return  # not the room's game in play
            # The first event of a game played (or played again after a restart) from its start.
            self.game = LiveGame.of(self.hooks.run_id, ctx.spec, number)
        self.hooks.services.rooms.keep_live(LiveWrite(self.game, (event,), start))
