"""Writes of many tasks that share transactions: each waits for at most the one transaction under way.

A server that answers a hundred callers at once (a hundred robots asking the gate in the same second) makes
four or five small writes for each, and on SQLite every transaction queues behind the one before: a commit
costs more than the statements in it, so the last caller waited for four hundred commits. Here whatever arrives
while a transaction is under way goes into the next one together, and each caller hears its own result once that
is committed. Writes of the same kind (:meth:`SharedTransactions.together`) are handed over as one list, so a
hundred episodes are saved in a few statements, not a hundred saves' worth; a task that awaits each of its writes
never has two in one transaction, so its writes stay in its order.

If a shared transaction fails, nothing of it was kept, and each of its writes is tried again in a transaction of
its own: one write the database refuses (a key another process took first) costs only its own caller, who gets
the error as if it had written alone. A write may therefore run twice, so it must change nothing but the session.

A write may read a row and write it back changed (a gate check's claim, its verdict): every transaction here is
opened for that (:meth:`~lexicoord.runs.store_engine.Database.writing`'s ``rewrites``), so two processes on one
SQLite store never both win the same row.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from lexicoord.runs.store_engine import Database

log = logging.getLogger(__name__)
T = TypeVar("T")
Item = TypeVar("Item")
#: Writes of one kind: given the session and their items, each item's result, in order.
Apply = Callable[[Session, list[Any]], Sequence[Any]]
#: A write's result: ``(True, value)`` or ``(False, the exception it raised)``.
Outcome = tuple[bool, Any]


def _each(s: Session, writes: list[Callable[[Session], Any]]) -> list[Any]:
    """Writes with nothing in common: one after another."""
    return [write(s) for write in writes]


class SharedTransactions:
    """``store``'s writes from the tasks of one event loop, on one thread named ``name``, batched as they come."""

    def __init__(self, store: Database, name: str) -> None:
        self._store = store
        self._name = name
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._queue: list[tuple[Apply, Any, asyncio.Future[Any]]] = []
        self._worker: asyncio.Task[None] | None = None
        self._closed = False

    async def write(self, write: Callable[[Session], T]) -> T:
        """``write(session)`` in a transaction shared with whatever else is waiting; its result once committed."""
        return await self._ask(_each, write)  # type: ignore[no-any-return]

    async def together(self, apply: Callable[[Session, list[Item]], Sequence[T]], item: Item) -> T:
        """``item`` written by ``apply(session, items)`` with every other item of the same ``apply`` waiting now
        (``apply`` gives each item's result, in order); its result once committed."""
        return await self._ask(apply, item)  # type: ignore[no-any-return]

    async def _ask(self, apply: Apply, item: Any) -> Any:
        if self._closed:
            raise RuntimeError(f"The store's writer {self._name} is closed; nothing more is written through it.")
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((apply, item, done))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await done

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                outcomes = await loop.run_in_executor(self._thread, self._commit, [(a, i) for a, i, _ in batch])
            except Exception as exc:  # the thread could not be reached (shut down): every caller hears why
                outcomes = [(False, exc)] * len(batch)
            except BaseException:  # cancelled with the loop: so are its callers' waits
                for _, _, done in batch:
                    done.cancel()
                raise
            for (_, _, done), (ok, value) in zip(batch, outcomes, strict=True):
                if done.done():
                    continue  # its caller went away: the write stands all the same
                if ok:
                    done.set_result(value)
                else:
                    done.set_exception(value)

    def _commit(self, writes: list[tuple[Apply, Any]]) -> list[Outcome]:
        """On the thread: every write in one transaction, those of one kind together; if that fails, each alone."""
        if len(writes) > 1:
            kinds: dict[Apply, list[int]] = {}
            for n, (apply, _) in enumerate(writes):
                kinds.setdefault(apply, []).append(n)
            values: list[Any] = [None] * len(writes)
            try:
                with self._store.writing(rewrites=True) as s:
                    for apply, places in kinds.items():
                        results = apply(s, [writes[n][1] for n in places])
                        if len(results) != len(places):
                            raise RuntimeError(f"{apply!r} gave {len(results)} results for {len(places)} writes")
                        for n, value in zip(places, results, strict=True):
                            values[n] = value
                return [(True, v) for v in values]
            except Exception:
                log.debug("a shared transaction of %d writes failed; each is tried alone", len(writes), exc_info=True)
        outcomes: list[Outcome] = []
        for apply, item in writes:
            try:
                with self._store.writing(rewrites=True) as s:
                    value = apply(s, [item])[0]
                outcomes.append((True, value))
            except Exception as exc:
                outcomes.append((False, exc))
        return outcomes

    async def aclose(self) -> None:
        """Once every write asked so far is committed (or has failed); later writes are refused. The event loop
        goes on meanwhile: a commit under way may wait for another process's lock."""
        self._closed = True
        while self._worker is not None and not self._worker.done():
            await asyncio.gather(self._worker, return_exceptions=True)
        await asyncio.to_thread(self._thread.shutdown, wait=True)
