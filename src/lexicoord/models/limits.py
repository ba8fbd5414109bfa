"""Per-provider concurrency limits, shared by every Model of that provider in a process.

Semaphores belong to an event loop, so one is kept per (loop, provider): a
second ``asyncio.run`` in the same process (tests, notebooks) gets fresh ones.
"""

from __future__ import annotations

import asyncio
import weakref

_limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def limiter(key: str, size: int) -> asyncio.Semaphore:
    """The semaphore for ``key`` on the running loop; ``size`` applies when it is first made."""
    loop = asyncio.get_running_loop()
    per_loop = _limits.setdefault(loop, {})
    sem = per_loop.get(key)
    if sem is None:
        sem = per_loop[key] = asyncio.Semaphore(max(1, size))
    return sem
