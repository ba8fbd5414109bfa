"""A seat for a person: the protocol asks, and waits until a person answers or time runs out.

The seat knows nothing of browsers or terminals; whatever front end is bound to
it calls :meth:`HumanSeat.submit`. A protocol calls :meth:`HumanSeat.request`
and gets the answer, or :class:`SeatTimeout` if nobody answered in time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lexicoord.agents.base import Agent


class SeatTimeout(Exception):
    def __init__(self, seat: str, timeout: float) -> None:
        super().__init__(f"{seat} did not answer within {timeout:g} s")
        self.seat = seat
        self.timeout = timeout


class HumanSeat(Agent):
    kind = "human"

    def __init__(self, name: str, *, timeout: float | None = 300.0, role: str | None = None) -> None:
        super().__init__(name, role)
        self.timeout = timeout
        self.pending: dict[str, Any] | None = None
        self._answer: asyncio.Future[Any] | None = None
        #: Called whenever a request starts or ends, so a front end can show it at once.
        self.listener: Callable[[], None] | None = None

    @property
    def waiting(self) -> bool:
        return self._answer is not None and not self._answer.done()

    async def request(self, payload: dict[str, Any], timeout: float | None = None) -> Any:
        """Show ``payload`` to the person (front ends read :attr:`pending`) and wait for the answer."""
        limit = self.timeout if timeout is None else timeout
        self.pending = payload
        self._answer = asyncio.get_running_loop().create_future()
        self._notify()
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), limit)
        except asyncio.TimeoutError:
            raise SeatTimeout(self.name, limit or 0.0) from None
        finally:
            self.pending = None
            self._answer = None
            self._notify()

    def _notify(self) -> None:
        if self.listener is not None:
            self.listener()

    def submit(self, answer: Any) -> bool:
        """Deliver the person's answer; ``False`` if nothing was being asked (late or duplicate)."""
        if self._answer is None or self._answer.done():
            return False
        self._answer.set_result(answer)
        return True
