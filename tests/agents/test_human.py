import asyncio

import pytest

from lexicoord.agents import HumanSeat, SeatTimeout


async def test_seat_waits_for_the_person() -> None:
    seat = HumanSeat("player-1", timeout=5)

    async def person() -> None:
        while not seat.waiting:
            await asyncio.sleep(0.005)
        assert seat.pending == {"options": ["a", "b"]}
        assert seat.submit({"choice": "b"})

    answer, _ = await asyncio.gather(seat.request({"options": ["a", "b"]}), person())
    assert answer == {"choice": "b"} and seat.pending is None


async def test_seat_times_out_and_late_answers_are_refused() -> None:
    seat = HumanSeat("player-2", timeout=0.05)
    with pytest.raises(SeatTimeout, match="player-2 did not answer within 0.05 s"):
        await seat.request({"q": 1})
    assert not seat.waiting and seat.submit("too late") is False
