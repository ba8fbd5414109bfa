"""A seat whose every answer is journaled, so an episode cut short is played again without asking twice.

The protocol is played again from its start after a crash or a restart; each seat answers its first
requests from the journal of the earlier attempt (with the model calls they cost, reported again so the
record is whole), then asks live, journaling each answer before the game goes on. A protocol is a
deterministic function of its answers and its seed, so the replayed part of the game is the game as it
was, and it goes on exactly where it stopped. A live room and a campaign runner journal the same way,
into the store's one journal under the episode's run and key (``Store.add_episode_moves``; a room's
game is an episode of the room's run), read back with ``Store.episode_moves`` and settled when the
episode is saved; the room adds its timeouts, interrupts and page updates around the live ask.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lexicoord.core.context import EpisodeContext, SeatMaker
from lexicoord.core.seat import Answer, Request, Seat, SeatInfo
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import LexicoordError
from lexicoord.models.observe import ModelCallRecord, current_observer, observing, report

#: Where a journal entry goes: ``(seat name, request index, entry)``; returns once it is kept.
RecordMove = Callable[[str, int, dict[str, Any]], Awaitable[None]]


class JournaledSeat(Seat):
    def __init__(self, inner: Seat, replay: list[dict[str, Any]], record: RecordMove) -> None:
        super().__init__(inner.name, inner.role)
        self.inner = inner
        self.kind, self.simulated = inner.kind, inner.simulated
        self.replay = [e for e in replay if "answer" in e or "error" in e]
        self.record = record
        self.calls = 0

    @property
    def present(self) -> bool:
        return self.inner.present

    def describe(self) -> SeatInfo:
        return self.inner.describe()

    async def answer(self, request: Request) -> Answer:
        """The journal's answer if this request was answered in an earlier attempt, else the seat's, live."""
        idx = self.calls
        self.calls += 1
        if idx < len(self.replay) and self.replay[idx].get("kind", request.kind) != request.kind:
            # The game went another way than the journal (changed code or rules): stop replaying here.
            self.replay = self.replay[:idx]
        if idx < len(self.replay):
            entry = self.replay[idx]
            for c in entry.get("calls", []):
                report(ModelCallRecord.model_validate(c))
            if "error" in entry:  # the seat's model could not be reached: the same error, in the same place
                self.on_failed(request, entry["error"])
                raise LexicoordError(entry["error"])
            answer = Answer.model_validate(entry["answer"])
            await self.inner.replayed(request, answer)
            self.on_replayed(request, answer)
            return answer
        captured: list[ModelCallRecord] = []
        outer = current_observer.get()

        def observe(record: ModelCallRecord) -> None:
            captured.append(record)
            if outer is not None:
                outer(record)

        def calls() -> list[dict[str, Any]]:
            return [c.model_dump(mode="json") for c in captured]

        try:
            with observing(observe):
                answer = await self.ask(request)
        except LexicoordError as exc:  # journaled too, so a replay fails this move exactly as it failed
            await self.record(self.name, idx, {"kind": request.kind, "error": str(exc), "calls": calls()})
            self.on_failed(request, str(exc))
            raise
        await self.record(self.name, idx, {"kind": request.kind, "answer": answer.model_dump(mode="json"),
                                           "calls": calls()})
        self.on_answered(request, answer)
        return answer

    async def ask(self, request: Request) -> Answer:
        """The live answer (a room wraps it with its timeouts and interrupts)."""
        return await self.inner.answer(request)

    def on_replayed(self, request: Request, answer: Answer) -> None:
        """A request answered from the journal."""

    def on_answered(self, request: Request, answer: Answer) -> None:
        """A request answered live, once its answer is journaled."""

    def on_failed(self, request: Request, error: str) -> None:
        """A request whose seat failed (its model could not be reached)."""


class JournaledSeats:
    """Fills an episode's seats as any run would (``base``), each wrapped in a :class:`JournaledSeat`."""

    def __init__(self, base: SeatMaker, replay: dict[str, list[dict[str, Any]]], record: RecordMove) -> None:
        self.base, self.replay, self.record = base, replay, record

    def __call__(self, spec: AgentSpec, ctx: EpisodeContext, system_prompt: str | None) -> Seat:
        return JournaledSeat(self.base(spec, ctx, system_prompt), self.replay.get(spec.name, []), self.record)
