"""Which episode each worker plays next, and how many play at once, on a run other processes may share.

Episodes are claimed through the store (:mod:`lexicoord.runs.claims`), and taken ahead of need: as many
as there are workers, topped up when half are gone (and again when workers took some while claims were
being taken). Episodes of equal length end together, and each
of their workers wants the next in the same instant; a claim is a write, on SQLite possibly queued behind
a save, so a worker that had to ask for one would wait. With a worker's worth in hand none does. A
process therefore holds at most twice its concurrency in claims beyond the episodes it is saving, all
renewed until their episodes are saved; those still held when it stops go back at once.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence

from lexicoord.runs.claims import Claims, Remaining

log = logging.getLogger(__name__)

#: Seconds between looks at what other processes still hold, while they finish the run's last episodes.
LOOK_AGAIN = 0.25
#: Plays the episode with this key, and hands it on to be saved.
Play = Callable[[str], Awaitable[None]]


class Scheduler:
    def __init__(self, claims: Claims, mine: Collection[str], concurrency: int) -> None:
        self.claims = claims
        #: Keys of the episodes this process can play (its grid).
        self.mine = mine
        #: Claims kept in hand beyond those being played.
        self.ahead = max(1, concurrency)
        #: Claimed here and not yet saved: renewed until they are.
        self.holding: set[str] = set()
        #: Played here and handed to be saved: a renewal that finds such a claim gone found its own save.
        self.saving: set[str] = set()
        #: Offered by another process with a grid this one does not have: left to it.
        self.foreign: set[str] = set()
        self._ready: collections.deque[str] = collections.deque()
        self._waiting = 0  # workers with nothing in hand, waiting for the claims being taken
        self._taking: asyncio.Task[bool] | None = None
        self._counting: asyncio.Task[Remaining] | None = None
        self._offering: asyncio.Task[None] | None = None  # the rows of the episodes not offered with the first
        self._stopping = False
        self._dry = False  # the last take found fewer free than it asked for: none are left to take now
        self._finished = False  # every worker found nothing left, and no claim is being taken

    async def play(self, todo: Sequence[tuple[str, int]], play: Play, workers: int) -> None:
        """Put this process's unfinished ``(key, position)`` episodes up for claiming, and play with ``workers``
        workers until every episode is saved or in play here (another process's last ones are waited for,
        and played here if their claims expire). Cancelled, every worker stops."""
        workers = max(1, workers)
        wanted = workers + self.ahead
        # The first episodes are offered and claimed in one trip, and play while the rest are offered: a large
        # grid's rows take a while to write (about 7 ms a thousand on SQLite), which every worker would wait for.
        ordered = sorted(todo, key=lambda entry: entry[1])
        self._got(await asyncio.to_thread(self._offer, ordered[:wanted], wanted), wanted)
        rest = ordered[wanted:]
        self._offering = asyncio.create_task(asyncio.to_thread(self.claims.offer, rest)) if rest else None
        renewing = asyncio.create_task(self._renew())
        tasks = [asyncio.create_task(self._work(play)) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
            self._finished = True
        finally:
            self._stopping = True  # no more claims are taken
            for task in (*tasks, renewing):
                task.cancel()
            await asyncio.gather(*tasks, renewing, return_exceptions=True)
            pending = [t for t in (self._taking, self._counting, self._offering) if t is not None]
            await asyncio.gather(*pending, return_exceptions=True)

    def saved(self, key: str) -> None:
        """The episode's save ended its claim: it needs no more renewing."""
        self.holding.discard(key)
        self.saving.discard(key)

    async def release(self) -> None:
        """Give back every claim still held (in play at an interrupt, or taken ahead and not needed), so that
        other processes need not wait for them to expire."""
        self._ready.clear()
        # After a finish every claim taken was recorded, and is held until its episode is saved. After an
        # interrupt a take may have been cut off after the database committed it: give back all.
        if self.holding or not self._finished:
            await asyncio.to_thread(self.claims.release)

    async def others_hold(self) -> bool:
        """Whether another process holds claims on this run now (it still plays it)."""
        return (await asyncio.to_thread(self.claims.remaining, self.foreign)).held > 0

    async def _work(self, play: Play) -> None:
        while True:
            key = await self._next()
            if key is None:
                if self._offering is not None and not self._offering.done():
                    # The rest of this process's episodes are being offered: none can be called left yet.
                    await asyncio.shield(self._offering)
                    self._dry = False
                    continue
                if self._offering is not None:
                    self._offering.result()  # an offer that failed stops the run, as it would have at the start
                left = await self._remaining()
                if left.free:  # claims expired, or were given back: take them
                    self._dry = False
                    continue
                if not left.held:
                    return  # every episode is saved or in play here
                # Another process holds the rest: wait for it to save them, or for its claims to expire. Looked at
                # four times a second (one small statement), so a process ends soon after the run's last save.
                await asyncio.sleep(min(max(left.next_expiry_in, 0.05), LOOK_AGAIN))
                continue
            if key not in self.mine:
                self.foreign.add(key)
                self.holding.discard(key)
                await asyncio.to_thread(self.claims.give_back, key)
                continue
            await play(key)
            self.saving.add(key)

    async def _next(self) -> str | None:
        """The next claimed episode, or None when nothing is free now."""
        while True:
            if self._ready:
                key = self._ready.popleft()
                if len(self._ready) <= self.ahead // 2 and not self._dry:
                    self._take()
                return key
            if self._dry:
                return None  # asking again would find nothing: see what is left instead
            self._waiting += 1
            try:
                took = await asyncio.shield(self._take())
            finally:
                self._waiting -= 1
            if not took and not self._ready:
                return None

    def _take(self) -> asyncio.Task[bool]:
        """The claims being taken; one statement at a time, for every worker that waits on it."""
        if self._taking is None or self._taking.done():
            self._taking = asyncio.create_task(self._take_now())
        return self._taking

    async def _take_now(self) -> bool:
        # Sized as the statement goes out, so that workers whose episodes ended in the same instant as the
        # one that asked are all served by it.
        wanted = max(1, self._waiting + self.ahead - len(self._ready))
        # Never this process's own claims, still held: one that expired while its episode played here would
        # otherwise be taken again and played twice.
        taken = await asyncio.to_thread(self.claims.take, self.foreign | self.holding, wanted)
        self._got(taken, wanted)
        if not self._dry and len(self._ready) < self.ahead and not self._stopping:
            # Workers took claims while this one was under way: top up at once (those waiting are woken as
            # this ends), so the next episodes to end together find a worker's worth in hand.
            self._taking = asyncio.create_task(self._take_now())
        return bool(taken)

    def _offer(self, todo: Sequence[tuple[str, int]], wanted: int) -> list[str]:
        """Offer, then claim the first ``wanted`` (in one trip off the event loop: the first episodes wait on it)."""
        self.claims.offer(todo)
        return self.claims.take(self.foreign, wanted)

    def _got(self, taken: list[str], wanted: int) -> None:
        self.holding.update(taken)  # renewed from now on
        self._ready.extend(taken)
        self._dry = len(taken) < wanted

    async def _remaining(self) -> Remaining:
        """What is left of the run; workers that run out together share one look."""
        if self._counting is None or self._counting.done():
            self._counting = asyncio.create_task(asyncio.to_thread(self.claims.remaining, self.foreign))
        return await asyncio.shield(self._counting)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.claims.lease / 4)
            if self.holding:
                gone = await asyncio.to_thread(self.claims.renew, set(self.holding))
                lost = (gone & self.holding) - self.saving  # neither saved here nor being saved here
                if lost:
                    log.warning("run %s: %d claim(s) expired and went to another process", self.claims.run_id,
                                len(lost))
