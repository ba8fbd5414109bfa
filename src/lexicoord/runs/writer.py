"""Saving ended episodes off the event loop, so playing never waits on the disk.

Episodes that end while a save is under way are saved together in the next transaction. If that
transaction fails, each of its episodes is saved again on its own, so one bad episode (an event the
database refuses) costs only itself, and a passing failure (a lock held too long) none: an episode that
still cannot be saved is saved as failed, with the reason, and is played again on resume. A store that
refuses even that has failed for good: the writer stops and says so, since nobody could keep what is
played from then on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from sqlalchemy.exc import DBAPIError

from lexicoord.core.events import ErrorEvent, Event
from lexicoord.runs import store_errors
from lexicoord.runs.episode import short_error
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store

log = logging.getLogger(__name__)

#: An ended episode and its events, as played or as saved.
Entry = tuple[EpisodeRecord, list[Event]]
#: Told of every batch once it is saved, each episode as stored (one that could not be saved, as failed).
Saved = Callable[[list[Entry]], Awaitable[None]]


class Writer:
    def __init__(self, store: Store, saved: Saved) -> None:
        self.store = store
        self.saved = saved
        self._queue: asyncio.Queue[Entry | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self, on_failure: Callable[[], object]) -> None:
        """Start saving; ``on_failure`` is called if saving fails for good (say, to stop playing)."""
        self._task = asyncio.create_task(self._write())
        self._task.add_done_callback(lambda t: on_failure() if not t.cancelled() and t.exception() else None)

    def put(self, entry: Entry) -> None:
        self._queue.put_nowait(entry)

    @property
    def failure(self) -> BaseException | None:
        """What made saving fail for good, if it did."""
        task = self._task
        return task.exception() if task is not None and task.done() and not task.cancelled() else None

    async def close(self) -> None:
        """Save everything put so far, then stop; raises what made saving fail for good. Cancelling the caller
        leaves the saving to go on (see :meth:`drain`)."""
        assert self._task is not None, "start the writer first"
        self._queue.put_nowait(None)
        await asyncio.shield(self._task)

    async def drain(self) -> None:
        """Save everything put so far, then stop, whatever happened: episodes that ended before an interrupt are
        kept. Never raises (see :attr:`failure`)."""
        if self._task is not None and not self._task.done():
            self._queue.put_nowait(None)
            await asyncio.gather(self._task, return_exceptions=True)

    async def _write(self) -> None:
        stop = False
        while not stop:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            stop = None in batch
            entries = [b for b in batch if b is not None]
            if entries:
                await self.saved(await self._save(entries))

    async def _save(self, entries: list[Entry]) -> list[Entry]:
        try:
            await asyncio.to_thread(self.store.save_episodes, entries)
            return entries
        except Exception as exc:
            if len(entries) > 1:  # save the good ones; find the one that cannot be saved
                return [saved for entry in entries for saved in await self._save([entry])]
            return [await self._save_failed(entries[0][0], exc)]

    async def _save_failed(self, record: EpisodeRecord, exc: Exception) -> Entry:
        if isinstance(exc, DBAPIError):  # the store's fault, said as one sentence: no traceback to read
            failure = f"the episode could not be saved: {store_errors.sentence(exc)}"
            log.error("run %s: %s", record.run_id, failure)
        else:
            failure = f"the episode could not be saved: {short_error(exc)}"
            log.exception("run %s: %s", record.run_id, failure)
        failed = record.model_copy(update={"status": "failed", "error": failure, "outcome": None})
        entry: Entry = (failed, [ErrorEvent(message=failure, error_type="StoreError")])
        await asyncio.to_thread(self.store.save_episodes, [entry])
        return entry
