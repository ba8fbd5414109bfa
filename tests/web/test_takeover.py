"""A person's seat taken over by a model mid-game: the request in flight is the model's, the change is
journalled, and a replay after a restart hands the seat over at the same point, telling it once."""

from __future__ import annotations

import asyncio
from typing import Any

from lexicoord.core.seat import Answer, Request, Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.core.takeover import SeatTakenOver
from lexicoord.seats.human import HumanSeat
from lexicoord.web.live import TAKEN, LiveSeat, LiveSeats

ASK = Request(kind="choose", round=0, choices=("bank", "river"))


class Model(Seat):
    """A stand-in model: always the second option, so its answers are told apart from a person's."""

    kind = "llm"

    async def answer(self, request: Request) -> Answer:
        return Answer(value={"choice": "river"}, raw="river")


class Hooks:
    def __init__(self) -> None:
        self.journal: list[tuple[str, int, dict[str, Any]]] = []
        self.taken: list[SeatTakenOver] = []

    def move_started(self, *args: Any) -> None: ...
    def move_done(self, *args: Any) -> None: ...
    def on_event(self, *args: Any) -> None: ...
    def end_requested(self) -> bool:
        return False

    def taken_over(self, event: SeatTakenOver) -> None:
        self.taken.append(event)

    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None:
        self.journal.append((name, idx, entry))


def seat(hooks: Hooks, timeout: float = 5.0, on_idle: str | None = None, replay: list[dict[str, Any]] | None = None,
         taken: dict[str, Any] | None = None, agent: bool = True) -> tuple[LiveSeat, HumanSeat]:
    person = HumanSeat("Ann", timeout=timeout)
    live = LiveSeat(person, hooks, replay or [], None, agent=(lambda model: Model("Ann")) if agent else None,
                    agent_timeout=5.0, on_idle=on_idle, taken=taken)
    return live, person


async def _wait_asked(person: HumanSeat) -> None:
    while not person.waiting:
        await asyncio.sleep(0.005)


def test_a_person_idle_past_the_limit_is_taken_over_and_the_model_answers_that_same_request() -> None:
    async def go() -> None:
        hooks = Hooks()
        live, _ = seat(hooks, timeout=0.05, on_idle="scripted/first")
        answer = await live.answer(ASK)
        assert answer.value == {"choice": "river"}
        assert [(e.agent, e.by, e.reason, e.after_moves) for e in hooks.taken] == [("Ann", "scripted/first", "idle", 1)]
        assert hooks.journal[0] == (f"{TAKEN}Ann", 0, {"kind": "taken", "after": 1, "model": "scripted/first",
                                                          "reason": "idle"})
        assert hooks.journal[1][0] == "Ann" and hooks.journal[1][2]["answer"]["value"] == {"choice": "river"}
        assert (await live.answer(ASK)).value == {"choice": "river"}  # and every request after it
        assert len(hooks.taken) == 1
        assert live.describe().kind == "human"  # still the person's seat in the record; the event says from when

    asyncio.run(go())


def test_without_a_takeover_an_idle_person_only_fails_the_move() -> None:
    async def go() -> None:
        hooks = Hooks()
        live, _ = seat(hooks, timeout=0.05, on_idle=None)
        answer = await live.answer(ASK)
        assert answer.failure and "did not answer" in answer.failure and not hooks.taken
        live2, _ = seat(Hooks(), agent=False)
        assert not await live2.take_over("scripted/first", "disconnected")  # an ordinary room's seat

    asyncio.run(go())


def test_a_takeover_while_the_person_is_asked_hands_the_open_request_to_the_model() -> None:
    async def go() -> None:
        hooks = Hooks()
        live, person = seat(hooks, timeout=30)
        first = asyncio.create_task(live.answer(ASK))
        await _wait_asked(person)
        person.submit({"choice": "bank"})
        assert (await first).value == {"choice": "bank"}  # the person's own move
        second = asyncio.create_task(live.answer(ASK))
        await _wait_asked(person)
        assert await live.take_over("scripted/first", "disconnected")
        assert not await live.take_over("scripted/first", "disconnected")  # once only
        assert (await asyncio.wait_for(second, 5)).value == {"choice": "river"}
        assert hooks.taken[0].after_moves == 2 and hooks.taken[0].reason == "disconnected"
        assert not person.submit({"choice": "bank"})  # the person's page can no longer answer it

    asyncio.run(go())


def test_a_replay_hands_the_seat_over_at_the_journalled_point_and_tells_it_once() -> None:
    async def go() -> None:
        hooks = Hooks()
        replay = [{"kind": "choose", "answer": {"value": {"choice": "bank"}}},
                  {"kind": "choose", "answer": {"value": {"choice": "river"}}}]
        live, person = seat(hooks, replay=replay, taken={"after": 2, "model": "scripted/first", "reason": "idle"})
        assert (await live.answer(ASK)).value == {"choice": "bank"}   # the person's, from the journal
        assert not hooks.taken
        assert (await live.answer(ASK)).value == {"choice": "river"}  # the model's, from the journal
        assert [e.after_moves for e in hooks.taken] == [2]
        third = await asyncio.wait_for(live.answer(ASK), 5)          # asked live: the model, never the person
        assert third.value == {"choice": "river"} and not person.waiting
        assert len(hooks.taken) == 1 and not any(name.startswith(TAKEN) for name, _, _ in hooks.journal)

    asyncio.run(go())


def test_a_takeover_journalled_before_a_crash_applies_to_the_request_it_interrupted() -> None:
    async def go() -> None:
        hooks = Hooks()
        replay = [{"kind": "choose", "answer": {"value": {"choice": "bank"}}}]  # the second was never answered
        live, person = seat(hooks, replay=replay, taken={"after": 2, "model": "scripted/first", "reason": "idle"})
        await live.answer(ASK)
        answer = await asyncio.wait_for(live.answer(ASK), 5)
        assert answer.value == {"choice": "river"} and not person.waiting and len(hooks.taken) == 1

    asyncio.run(go())


def test_live_seats_give_a_takeover_only_to_peoples_seats_of_a_managed_game() -> None:
    hooks = Hooks()

    def base(spec: AgentSpec, ctx: Any, prompt: str | None) -> Seat:
        return HumanSeat(spec.name) if spec.kind == "human" else Model(spec.name)

    managed = LiveSeats(base, hooks, {}, 5.0, takeover=True, on_idle="scripted/first")
    plain = LiveSeats(base, hooks, {}, 5.0)
    person, agent = AgentSpec(name="Ann", kind="human"), AgentSpec(name="Bot", model="m")
    assert managed(person, None, None).agent is not None  # type: ignore[attr-defined,arg-type]
    assert managed(agent, None, None).agent is None  # type: ignore[attr-defined,arg-type]
    assert plain(person, None, None).agent is None  # type: ignore[attr-defined,arg-type]


def test_two_takeovers_at_once_write_the_journal_once() -> None:
    """Idle and away in the same moment: the journal's write is awaited, and the second caller must not pass."""
    async def go() -> None:
        hooks = Hooks()
        record = hooks.record_move

        async def slow(name: str, idx: int, entry: dict[str, Any]) -> None:
            await asyncio.sleep(0.02)
            await record(name, idx, entry)

        hooks.record_move = slow  # type: ignore[method-assign]
        live, _ = seat(hooks)
        done = await asyncio.gather(live.take_over("scripted/first", "idle"),
                                    live.take_over("scripted/first", "disconnected"))
        assert sorted(done) == [False, True]
        assert [name for name, _, _ in hooks.journal] == [f"{TAKEN}Ann"] and len(hooks.taken) == 1

    asyncio.run(go())
