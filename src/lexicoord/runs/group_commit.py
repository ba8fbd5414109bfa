"""Group commit: many writers of the same moment share one transaction.

Hundreds of participants may move, and a hundred rooms open, in the same second; a transaction each would
queue them all behind one another. Here a write waits for at most the one transaction under way, and
whatever arrives meanwhile goes into the next one together. Each item is read (``read()``) only when its
transaction is made, on the event loop where it changes, so an item changed five times in that moment is
copied and written once, as it stands last.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)


class GroupCommit:
    """Writes ``{key: value}`` batches through ``write`` (which commits them in one transaction), one at a time."""

    def __init__(self, write: Callable[[dict[str, Any]], Awaitable[None]], what: str) -> None:
        self._write = write
        self._what = what
        self._pending: dict[str, Callable[[], Any]] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self._worker: asyncio.Task[None] | None = None

    async def save(self, items: Mapping[str, Callable[[], Any]]) -> None:
        """Write ``items`` (each as its ``read()`` gives it when the transaction is made); returns once they are
        committed, or raises why not. With no items: once everything asked before is committed."""
        self._pending.update(items)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(done)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        await done

    async def _drain(self) -> None:
        while self._waiters:
            pending, waiters = self._pending, self._waiters
            self._pending, self._waiters = {}, []
            try:
                await self._write({key: read() for key, read in pending.items()})
            except Exception as exc:  # every waiter hears why: its change was not kept
                log.exception("%s could not be saved", self._what)
                for w in waiters:
                    if not w.done():
                        w.set_exception(exc)
                continue
            for w in waiters:
                if not w.done():
                    w.set_result(None)

    async def flushed(self) -> None:
        """Once everything asked so far is written (before the server stops)."""
        if self._worker is not None and not self._worker.done():
            await asyncio.shield(self._worker)
