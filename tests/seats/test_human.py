import asyncio
import json

from lexicoord.core.seat import Answer, Request
from lexicoord.seats import HumanSeat

PICK = Request(kind="choose", view={"options": ["a", "b"]}, choices=("a", "b"))


async def test_seat_waits_for_the_person() -> None:
    seat = HumanSeat("player-1", timeout=5)

    async def person() -> None:
        while not seat.waiting:
            await asyncio.sleep(0.005)
        assert seat.pending == PICK and seat.pending.view == {"options": ["a", "b"]}
        assert seat.submit({"choice": "b"})

    answer, _ = await asyncio.gather(seat.answer(PICK), person())
    assert answer.ok and answer.value == {"choice": "b"} and seat.pending is None
    assert json.loads(answer.raw) == {"choice": "b"}, "the raw answer is kept as JSON"


async def test_seat_times_out_and_late_answers_are_refused() -> None:
    seat = HumanSeat("player-2", timeout=0.05)
    answer = await seat.answer(Request(kind="say", view={"q": 1}))
    assert answer == Answer(failure="player-2 did not answer within 0.05 s")
    assert not answer.ok and answer.value is None
    assert not seat.waiting and seat.pending is None and seat.submit({"text": "too late"}) is False


async def test_nothing_pending_refuses_an_answer() -> None:
    seat = HumanSeat("idle", timeout=1)
    assert seat.submit({"choice": "a"}) is False and seat.submit(action="pass") is False


async def test_a_person_who_left_fails_the_waiting_request_and_every_later_one_at_once() -> None:
    import asyncio
    import time

    from lexicoord.core.seat import Request
    from lexicoord.seats.human import HumanSeat

    seat = HumanSeat("p", timeout=60)
    started = time.monotonic()
    waiting = asyncio.create_task(seat.answer(Request(kind="choose", choices=("a", "b"))))
    while not seat.waiting:
        await asyncio.sleep(0.01)
    seat.leave("the person's input ended")
    first = await waiting
    later = await seat.answer(Request(kind="choose", choices=("a", "b")))
    assert first.failure == later.failure == "the person's input ended"
    assert time.monotonic() - started < 5 and not seat.submit({"choice": "a"})
