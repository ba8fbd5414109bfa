"""The coordination game, unchanged, bound to a live room.

:class:`LivePlayer` wraps each player the rules create and adds what a room
needs around every move, without touching the rules:

- it tells the room when a player starts and finishes a move (who has chosen,
  never what), so pages update as answers arrive;
- a model agent that does not answer within the room's limit fails its move,
  so a slow or broken agent never freezes a round;
- the leader ending the game, or letting a person go, interrupts moves at once;
- every answered request is written to the room's journal before the game goes
  on. After a restart the same game is played again with the journal answering
  for every move already made (with the model calls it cost), so it resumes
  exactly where it stopped and no move is lost or asked twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from lexicoord.agents.base import AgentSpec
from lexicoord.agents.human import HumanSeat
from lexicoord.models.observe import ModelCallRecord, current_observer, observing, report
from lexicoord.protocols.base import EpisodeContext
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.protocols.coordination.players import Player
from lexicoord.protocols.coordination.views import Decision, RoundView
from lexicoord.runs.events import Event
from lexicoord.runs.recorder import Recorder


class RoomHooks(Protocol):
    """What a live game tells its room, and asks it."""

    def move_started(self, name: str, kind: str, round_: int, deadline: float | None) -> None: ...
    def move_done(self, name: str, kind: str, round_: int, failure: str | None) -> None: ...
    def on_event(self, event: Event) -> None: ...
    def end_requested(self) -> bool: ...
    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None: ...


class LivePlayer(Player):
    def __init__(self, inner: Player, hooks: RoomHooks, replay: list[dict[str, Any]], timeout: float | None) -> None:
        super().__init__(inner.agent)
        self.inner = inner
        self.hooks = hooks
        self.replay = list(replay)
        self.timeout = timeout
        self.calls = 0
        self.absent = False
        self.stop = asyncio.Event()
        self.stop_reason = ""

    @property
    def present(self) -> bool:
        return not self.absent

    def interrupt(self, reason: str, *, leave: bool = False) -> None:
        """End this player's current and future moves: the game was ended, or the person left."""
        self.stop_reason = reason
        self.absent = self.absent or leave
        self.stop.set()

    def _deadline(self) -> float | None:
        if self.timeout is not None:
            return time.time() + self.timeout
        if isinstance(self.agent, HumanSeat) and self.agent.timeout:
            return time.time() + self.agent.timeout
        return None

    async def _run(
        self, kind: str, round_: int, call: Callable[[], Awaitable[Any]], encode: Callable[[Any], Any],
        failed: Callable[[str], Any],
    ) -> Any:
        """One request, answered from the journal if it was answered before a restart, else played live."""
        idx = self.calls
        self.calls += 1
        if idx < len(self.replay):
            entry = self.replay[idx]
            for c in entry.get("calls", []):
                report(ModelCallRecord.model_validate(c))
            self.last_failure = entry.get("last_failure")
            value = entry["value"]
            if kind != "end":  # the page shows the replayed move as made
                self.hooks.move_started(self.name, kind, round_, None)
                self.hooks.move_done(self.name, kind, round_, value.get("failure") if isinstance(value, dict) else None)
            return value
        captured: list[ModelCallRecord] = []
        outer = current_observer.get()

        def observe(record: ModelCallRecord) -> None:
            captured.append(record)
            if outer is not None:
                outer(record)

        failure: str | None = None
        if kind == "end":
            value = encode(await call())
        elif self.stop.is_set():
            value, failure = failed(self.stop_reason), self.stop_reason
        else:
            self.hooks.move_started(self.name, kind, round_, self._deadline())
            with observing(observe):
                task = asyncio.ensure_future(call())
            stopper = asyncio.ensure_future(self.stop.wait())
            try:
                done, _ = await asyncio.wait({task, stopper}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                task.cancel()  # the room is shutting down: the journal keeps every finished move
                raise
            finally:
                stopper.cancel()
            if task in done:
                value = encode(task.result())
                failure = value.get("failure") if isinstance(value, dict) else None
            else:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                failure = self.stop_reason if self.stop.is_set() else f"no answer within {self.timeout:g} s"
                value = failed(failure)
        self.last_failure = self.inner.last_failure if kind == "clarify" and failure is None else failure
        entry = {"kind": kind, "value": value, "last_failure": self.last_failure,
                 "calls": [c.model_dump(mode="json") for c in captured]}
        await self.hooks.record_move(self.name, idx, entry)
        if kind != "end":
            self.hooks.move_done(self.name, kind, round_, failure)
        return value

    async def _decision(self, kind: str, view: RoundView, call: Callable[[], Awaitable[Decision]]) -> Decision:
        data = await self._run(
            kind, view.round, call, lambda d: d.model_dump(), lambda why: Decision(choice=None, failure=why).model_dump()
        )
        return Decision.model_validate(data)

    async def choose(self, view: RoundView) -> Decision:
        return await self._decision("choose", view, lambda: self.inner.choose(view))

    async def announce(self, view: RoundView) -> Decision:
        return await self._decision("announce", view, lambda: self.inner.announce(view))

    async def clarify(self, view: RoundView) -> str | None:
        return await self._run("clarify", view.round, lambda: self.inner.clarify(view), lambda s: s, lambda _: None)

    async def wants_to_end(self, view: RoundView) -> bool:
        async def ask() -> bool:
            return self.hooks.end_requested() or await self.inner.wants_to_end(view)

        return bool(await self._run("end", view.round, ask, bool, lambda _: True))


class LiveRecorder(Recorder):
    """Records as usual and passes every event on to the room as it happens."""

    def __init__(self, hooks: RoomHooks) -> None:
        super().__init__()
        self.hooks = hooks

    def emit(self, event: Event) -> Event:
        super().emit(event)
        self.hooks.on_event(event)
        return event


class LiveGame(CoordinationGame):
    """The coordination rules with every player wrapped in a :class:`LivePlayer`."""

    def __init__(
        self, hooks: RoomHooks, seats: dict[str, HumanSeat], replay: dict[str, list[dict[str, Any]]],
        agent_timeout: float,
    ) -> None:
        super().__init__(seats=seats)
        self.hooks = hooks
        self.replay = replay
        self.agent_timeout = agent_timeout
        self.players: dict[str, LivePlayer] = {}

    def make_player(self, spec: AgentSpec, ctx: EpisodeContext) -> Player:
        inner = super().make_player(spec, ctx)
        timeout = None if spec.kind == "human" else self.agent_timeout
        player = LivePlayer(inner, self.hooks, self.replay.get(spec.name, []), timeout)
        self.players[spec.name] = player
        return player
