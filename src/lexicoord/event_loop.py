"""The event loop a command plays on: uvloop where it is installed, else asyncio's own.

A campaign is tens of model calls waiting at once, and what a run costs over its ideal is mostly how late the loop
wakes each one when its reply is due (``benchmarks/cogent_speed.py --explain``). asyncio's own loop on Linux
rounds every wait in ``epoll`` up to the next millisecond, so a call's wait ends a mean 1.1 ms late; uvloop's
(libuv) ends 0.55 ms late and runs each callback for less. uvloop comes with ``uvicorn[standard]``, and the web
server runs on it as well.

While a command plays, a thread that holds the interpreter's lock gives it back to the loop within a millisecond
(:data:`SWITCH_INTERVAL`), not Python's default five: the store's saves and claims run on threads, and a loop
kept waiting for the lock wakes every call due meanwhile that much later.

``LEXICOORD_EVENT_LOOP=asyncio`` picks asyncio's own loop (to rule the loop out when a plug-in misbehaves, or to
compare); ``uvloop`` insists on uvloop and says so when it is missing; ``auto`` (the default) takes uvloop where
it is installed (not on Windows, where it does not exist).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from lexicoord.errors import ConfigError

T = TypeVar("T")

#: Seconds a thread runs before it must hand the interpreter's lock to another that waits (Python's default: 0.005).
SWITCH_INTERVAL = 0.001

#: The environment variable that picks the loop, and the values it takes.
VARIABLE = "LEXICOORD_EVENT_LOOP"
CHOICES = ("auto", "uvloop", "asyncio")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes the loop a command runs on (``None``: asyncio's own), as ``LEXICOORD_EVENT_LOOP`` says."""
    chosen = os.environ.get(VARIABLE, "auto").strip().lower() or "auto"
    if chosen not in CHOICES:
        raise ConfigError(f"{VARIABLE} must be one of {', '.join(CHOICES)}, not {os.environ[VARIABLE]!r}.")
    if chosen == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if chosen == "uvloop":
            raise ConfigError(f"{VARIABLE}=uvloop, but uvloop is not installed here (pip install uvloop; it does "
                              "not exist on Windows), or unset it to use asyncio's own loop.") from None
        return None
    return uvloop.new_event_loop


def name() -> str:
    """``uvloop`` or ``asyncio``: the loop :func:`run` would use now (benchmarks print it beside their figures)."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on the chosen loop: the same Ctrl-C handling (the main task is cancelled, then
    ``KeyboardInterrupt``), the same clean-up of async generators and the default executor."""
    try:
        factory = loop_factory()
    except ConfigError:
        coro.close()  # never awaited: close it so Python does not warn about it as well
        raise
    before = sys.getswitchinterval()
    shorten = before > SWITCH_INTERVAL  # a caller's shorter setting is left alone (a round trip may lose a µs)
    if shorten:
        sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        with asyncio.Runner(loop_factory=factory) as runner:
            return runner.run(coro)
    finally:
        if shorten:
            sys.setswitchinterval(before)  # a library caller's own setting, as it was
