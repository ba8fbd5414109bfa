"""A seat for a person: the protocol asks, and waits until a person answers or time runs out.

The seat knows nothing of browsers or terminals; whatever front end is bound to
it reads :attr:`HumanSeat.pending` (the request, with the view the person may
see) and calls :meth:`HumanSeat.submit`. An answer is checked against the
request's schema, the same one a model answers, so the same limits hold for
people and models; a front end checks first (``request.check``) so the person
can correct it, and the seat checks again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from lexicoord.core.seat import Answer, Request, Seat


class HumanSeat(Seat):
    kind = "human"

    def __init__(self, name: str, *, timeout: float | None = 300.0, role: str | None = None) -> None:
        super().__init__(name, role)
        self.timeout = timeout
        self.pending: Request | None = None
        self._answer: asyncio.Future[Answer] | None = None
        #: Called whenever a request starts or ends, so a front end can show it at once.
        self.listener: Callable[[], None] | None = None
        #: The last request ended with no answer in time (a study hands an idle person's seat to a model).
        self.timed_out = False
        #: Why the person is gone for good (their input ended): every request fails at once with it.
        self.gone: str | None = None

    @property
    def waiting(self) -> bool:
        return self._answer is not None and not self._answer.done()

    async def answer(self, request: Request) -> Answer:
        """Show ``request`` to the person and wait; no answer in time is a failed move, not an error."""
        if self.gone is not None:
            return Answer(failure=self.gone)
        limit = self.timeout
        self.pending = request
        self.timed_out = False
        self._answer = asyncio.get_running_loop().create_future()
        self._notify()
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), limit)
        except TimeoutError:
            self.timed_out = True
            return Answer(failure=f"{self.name} did not answer within {limit or 0.0:g} s")
        finally:
            self.pending = None
            self._answer = None
            self._notify()

    def leave(self, reason: str) -> None:
        """The person is gone (their keyboard's input ended): the request waiting now and every later one fail at
        once with ``reason``, rather than each waiting out its time limit."""
        self.gone = reason
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(Answer(failure=reason))

    def _notify(self) -> None:
        if self.listener is not None:
            self.listener()

    def submit(self, value: dict[str, Any] | None = None, *, action: str | None = None) -> bool:
        """Deliver the person's answer (or an action the request offers); ``False`` if nothing was being asked."""
        if self._answer is None or self._answer.done() or self.pending is None:
            return False
        if action is not None:
            result = (Answer(action=action) if action in self.pending.actions
                      else Answer(failure=f"'{action}' is not offered here", raw=action))
        else:
            problem = self.pending.check(value)
            raw = json.dumps(value, ensure_ascii=False)[:2000]
            result = Answer(value=value, raw=raw) if problem is None else Answer(failure=problem, raw=raw)
        self._answer.set_result(result)
        return True
