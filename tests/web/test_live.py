"""A seat bound to a room: every request's end is journalled, a model's failure included, and a replay
answers from the journal in the same order without asking the seat again."""

from __future__ import annotations

from typing import Any

import pytest

from lexicoord.core.events import Event
from lexicoord.core.seat import Answer, Request, Seat
from lexicoord.errors import LexicoordError, ModelError
from lexicoord.web.live import LiveControl, LiveSeat


class Journal:
    def __init__(self, end: bool = False) -> None:
        self.entries: list[tuple[str, int, dict[str, Any]]] = []
        self.shown: list[tuple[str, str, str | None]] = []
        self.end = end

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None:
        self.shown.append(("started", name, None))

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        self.shown.append(("done", name, failure))

    def on_event(self, event: Event) -> None: ...

    def end_requested(self) -> bool:
        return self.end

    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None:
        self.entries.append((name, idx, entry))


class Flaky(Seat):
    """Fails its first request as an unreachable model would, then answers."""

    kind = "llm"

    def __init__(self) -> None:
        super().__init__("bot")
        self.asked = 0

    async def answer(self, request: Request) -> Answer:
        self.asked += 1
        if self.asked == 1:
            raise ModelError("server at http://127.0.0.1:9 is unreachable")
        return Answer(value={"choice": "a", "justification": "second time"}, raw="{}")


ASK = Request(kind="choose", round=1, schema={"type": "object"})


async def test_a_models_failure_is_journalled_and_replayed_in_its_place() -> None:
    journal = Journal()
    live = LiveSeat(Flaky(), journal, [], timeout=5)
    with pytest.raises(ModelError, match="unreachable"):
        await live.answer(ASK)
    assert (await live.answer(ASK)).value == {"choice": "a", "justification": "second time"}
    assert [(n, i, "error" in e) for n, i, e in journal.entries] == [("bot", 0, True), ("bot", 1, False)]
    assert ("done", "bot", "server at http://127.0.0.1:9 is unreachable") in journal.shown

    inner = Flaky()
    again = LiveSeat(inner, Journal(), [e for _, _, e in journal.entries], timeout=5)
    with pytest.raises(LexicoordError, match="unreachable"):
        await again.answer(ASK)
    assert (await again.answer(ASK)).value == {"choice": "a", "justification": "second time"}
    assert inner.asked == 0, "a replay never asks the seat again"


async def test_the_end_signal_is_journalled_and_replayed() -> None:
    journal = Journal(end=False)
    control = LiveControl(journal, [])
    assert await control.should_end() is False
    journal.end = True
    assert await control.should_end() is True
    replayed = LiveControl(Journal(end=False), [e for _, _, e in journal.entries])
    assert [await replayed.should_end(), await replayed.should_end()] == [False, True]


async def test_a_person_who_left_stops_counting_at_the_same_point_after_a_restart() -> None:
    class Person(Seat):
        kind = "human"

        async def answer(self, request: Request) -> Answer:
            return Answer(value={"choice": "a", "justification": "mine"})

    journal = Journal()
    live = LiveSeat(Person("Bob"), journal, [], timeout=None)
    await live.answer(ASK)  # one move made, then the leader lets Bob go
    await live.leave("Bob left the room")
    assert not live.present and (await live.answer(ASK)).failure == "Bob left the room"
    moves = [e for n, _, e in journal.entries if n == "Bob"]
    [left] = [e for n, _, e in journal.entries if n == "#left:Bob"]
    assert left["after"] == 1

    replayed = LiveSeat(Person("Bob"), Journal(), moves, timeout=None, left_after=left["after"])
    assert replayed.present, "Bob still counts for the move he made"
    assert (await replayed.answer(ASK)).value is not None
    assert not replayed.present, "and stops counting where he left"
    assert (await replayed.answer(ASK)).failure == "Bob left the room"


async def test_a_replay_brings_a_seats_own_memory_to_where_answering_would_have_left_it() -> None:
    from lexicoord.models import Model
    from lexicoord.models.providers.scripted import ScriptedProvider
    from lexicoord.seats.llm import LLMSeat

    remembered = Request(kind="propose", prompt="What do you propose?", schema={"type": "object"}, remember=True)
    seat = LLMSeat("lead", Model(ScriptedProvider("none", [])))  # an empty script: asking it would fail loudly
    entry = {"kind": "propose", "answer": {"value": {"verdict": "clear"}, "raw": '{"verdict": "clear"}'}}
    live = LiveSeat(seat, Journal(), [entry], timeout=None)
    assert (await live.answer(remembered)).value == {"verdict": "clear"}
    assert [(m.role, m.content) for m in seat.history] == [("user", "What do you propose?"),
                                                            ("assistant", '{"verdict": "clear"}')]
