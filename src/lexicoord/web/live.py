"""Any protocol, unchanged, bound to a live room: its seats and its end signal wrapped, never its rules.

:class:`LiveSeat` wraps each seat the protocol asks for and adds what a room
needs around every request, whatever the protocol:

- it tells the room when a seat starts and finishes a move (who has moved,
  never what), so pages update as answers arrive;
- a model seat that does not answer within the room's limit fails its move,
  so a slow or broken agent never freezes a round;
- the leader ending the game, or letting a person go, interrupts moves at once;
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
from typing import TYPE_CHECKING, Any, Protocol

from lexicoord.core.context import Control, EpisodeContext, SeatMaker
from lexicoord.core.events import Event
from lexicoord.core.recorder import Recorder
from lexicoord.core.seat import Answer, Request, Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.runs.store import LiveGame, LiveWrite
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.journal import JournaledSeat

if TYPE_CHECKING:
    from lexicoord.web.services import Services

#: The journal's name for the game's end checks (seat names cannot start with '#').
CONTROL = "#control"
#: The journal's name for when a person left the game: ``#left:<seat>``.
LEFT = "#left:"


class RoomHooks(Protocol):
    """What a live game tells its room, and asks it."""

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None: ...
    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None: ...
    def on_event(self, event: Event) -> None: ...
    def end_requested(self) -> bool: ...
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
                 left_after: int | None = None) -> None:
        super().__init__(inner, replay, hooks.record_move)
        self.hooks = hooks
        self.timeout = timeout
        self.absent = False
        self.stop = asyncio.Event()
        self.stop_reason = ""
        #: From the journal: the person left once this many requests had been answered.
        self.left_after = left_after
        self._left_if_due()

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

    def on_answered(self, request: Request, answer: Answer) -> None:
        self.hooks.move_done(self.name, request.kind, request.round, answer.failure)

    def on_failed(self, request: Request, error: str) -> None:
        self.hooks.move_done(self.name, request.kind, request.round, error)

    async def ask(self, request: Request) -> Answer:
        """The seat's answer within the room's limit, or a failed move when the game is ended or the seat left."""
        if self.stop.is_set():
            return Answer(failure=self.stop_reason)
        self.hooks.move_started(self.name, request.kind, request.round, self._deadline())
        task = asyncio.ensure_future(self.inner.answer(request))
        stopper = asyncio.ensure_future(self.stop.wait())
        try:
            done, _ = await asyncio.wait({task, stopper}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()  # the room is shutting down: the journal keeps every finished move
            raise
        finally:
            stopper.cancel()
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
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
                 agent_timeout: float) -> None:
        self.base = base
        self.hooks = hooks
        self.replay = replay
        self.agent_timeout = agent_timeout
        self.live: dict[str, LiveSeat] = {}

    def __call__(self, spec: AgentSpec, ctx: EpisodeContext, system_prompt: str | None) -> Seat:
        inner = self.base(spec, ctx, system_prompt)
        timeout = None if isinstance(inner, HumanSeat) else self.agent_timeout
        left = self.replay.get(f"{LEFT}{spec.name}")
        seat = LiveSeat(inner, self.hooks, self.replay.get(spec.name, []), timeout,
                        left_after=int(left[0]["after"]) if left else None)
        self.live[spec.name] = seat
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
