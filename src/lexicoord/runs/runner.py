"""Runs a grid of episodes: which are left, who plays them, where they are saved, who hears of it.

Each episode ends in exactly one transaction (:mod:`lexicoord.runs.writer`): done with its outcome, or
failed with its error; both keep every event emitted so far. Re-running a run skips its done episodes
and plays the rest (failed ones included, unless ``retry_failed=False``). An interrupt (Ctrl-C, a kill)
loses only the episodes in flight, which the next run plays again.

Several processes, on one machine or many, started with the same run name on the same store share its
episodes: each is claimed through the database by one process at a time (:mod:`lexicoord.runs.scheduler`),
and a process killed outright leaves its claims to expire, after which another process plays them again.

The runner draws nothing: the caller's :class:`~lexicoord.runs.progress.RunObserver` hears the run.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from lexicoord.core.context import EpisodeContext, SeatMaker
from lexicoord.core.events import Event
from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import EpisodeSpec, episode_seed
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.models.budget import Budget, RateLimit
from lexicoord.models.pool import ModelPool
from lexicoord.models.provider import calls_at_once
from lexicoord.runs.claims import Claims
from lexicoord.runs.episode import play_episode
from lexicoord.runs.lease import lease_from_env
from lexicoord.runs.progress import RunObserver
from lexicoord.runs.rate_budget import StoreBudget, spent
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.scheduler import Scheduler
from lexicoord.runs.shared_cache import StoreCache, shares_cache
from lexicoord.runs.stopping import Terminated, sigterm_cancels
from lexicoord.runs.store import Store
from lexicoord.runs.summary import RunSummary
from lexicoord.runs.writer import Entry, Writer
from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.journal import JournaledSeats


class Runner:
    def __init__(
        self,
        store: Store,
        protocol: Protocol[Any, Any, Any],
        *,
        models: ModelPool | None = None,
        concurrency: int = 4,
        seed: int = 0,
        retry_failed: bool = True,
        people: dict[str, HumanSeat] | None = None,
        lease: float | None = None,
        rate_limits: Mapping[str, RateLimit] | None = None,
    ) -> None:
        self.store = store
        #: Each model's requests and tokens a minute, drawn on by every process of a run (runs/rate_budget.py).
        self.rate_limits = {spec: limit for spec, limit in (rate_limits or {}).items() if limit.limited}
        #: Seconds a claim on an episode lasts without renewal (``LEXICOORD_CLAIM_SECONDS``; see runs/claims.py).
        self.lease = lease if lease is not None else lease_from_env()
        self.protocol = protocol
        self.models = models or ModelPool()
        self.concurrency = max(1, concurrency)
        self.seed = seed
        self.retry_failed = retry_failed
        #: Seats people fill (a terminal game binds one); every other seat is made for its episode.
        self.seats = SeatFactory(self.models, people=people, own_kinds=protocol.seat_kinds)

    async def run(self, run_id: str, episodes: Sequence[EpisodeSpec], config: dict[str, Any] | None = None, *,
                  observer: RunObserver | None = None, grows: Collection[str] = ()) -> RunSummary:
        """Play the episodes of ``run_id`` not finished yet; ``observer`` hears the run (nothing: no one does).
        ``grows``: the config keys a resume may grow (see :meth:`Store.open_run`)."""
        watch = observer or RunObserver()
        keys = [e.key for e in episodes]  # a key is a hash of the whole spec: made once per episode of the run
        done_keys = await self._open(run_id, episodes, keys, config, grows)
        by_key = {key: (i, e) for i, (key, e) in enumerate(zip(keys, episodes))}
        todo = [(key, i) for key, (i, _) in by_key.items() if key not in done_keys]
        summary = RunSummary(run_id=run_id, total=len(episodes), skipped=len(episodes) - len(todo))
        started = time.perf_counter()
        claims = Claims(self.store, run_id, lease=self.lease, skip=("done",) if self.retry_failed else ("done", "failed"))
        scheduler = Scheduler(claims, by_key, self.concurrency)
        # Only done episodes were skipped, so the store's done count above them is other processes' work.
        others = _RunWide(self.store, run_id, len(done_keys) if self.retry_failed else None, bool(self.rate_limits))
        await others.start()

        async def saved(entries: list[Entry]) -> None:
            for record, events in entries:
                scheduler.saved(record.key)
                summary.count(record, events)
                watch.episode_ended(record, events, summary)
            if await others.count(summary):
                watch.others_counted(summary)

        writer = Writer(self.store, saved)

        async def play(key: str) -> None:
            position, spec = by_key[key]
            writer.put(await self._play(run_id, position, spec, key))

        watch.started(run_id, summary.total, summary.skipped)
        workers = min(self.concurrency, len(todo)) or 1
        # The workers' model calls know how many of them run at once (``calls_at_once``), this run's tasks only.
        at_once = contextvars.copy_context()
        at_once.run(calls_at_once.set, workers)
        playing = asyncio.get_running_loop().create_task(scheduler.play(todo, play, workers), context=at_once)
        writer.start(on_failure=playing.cancel)  # saving failed for good: stop playing what nobody can keep
        status = "interrupted"
        with sigterm_cancels(asyncio.current_task()) as terminated:
            try:
                await playing
                await writer.close()
                if await others.count(summary, now=True):
                    watch.others_counted(summary)
                status = "finished"
            except BaseException:
                summary.interrupted = True
                playing.cancel()
                await asyncio.gather(playing, return_exceptions=True)
                await writer.drain()  # episodes that ended before the interrupt are still saved
                if writer.failure is not None:
                    raise writer.failure from None
                if terminated:
                    raise Terminated("stopped by SIGTERM") from None
                raise
            finally:
                try:
                    summary.wall_time = time.perf_counter() - started
                    await scheduler.release()
                    # While another process still plays the run, an interrupted one leaves its status as it is
                    # ("running"), and the last process to end marks it. It writes nothing then: processes
                    # interrupted together each give their claims back before they look, so the last to look
                    # sees none and writes "interrupted", and no earlier look can write "running" over it.
                    if not (status == "interrupted" and await scheduler.others_hold()):
                        await asyncio.to_thread(self.store.set_run_status, run_id, status)
                    await self.models.aclose()
                finally:
                    watch.ended(summary)
        return summary

    async def _open(self, run_id: str, episodes: Sequence[EpisodeSpec], keys: list[str],
                    config: dict[str, Any] | None, grows: Collection[str] = ()) -> set[str]:
        """Check the grid, open (or resume) the run; the keys of its episodes that are not to be played again."""
        if len(set(keys)) != len(keys):
            raise LexicoordError("The run lists the same episode twice (same item, settings, line-up and repetition).")
        # Resolve every model named in the line-ups now: a missing key or server address is
        # one clear error before the run starts, not a failure in every episode.
        for spec in {a.model for e in episodes for a in e.lineup if a.kind == "llm" and a.model}:
            self.models.get(spec)
        unused = sorted(set(self.rate_limits) - set(self.models.specs))
        if unused:  # a typo in a limit would otherwise let the run go over the provider's limit, unsaid
            raise ConfigError(f"rate_limits names {', '.join(unused)}, which no seat of the run uses; the run's "
                              f"models: {', '.join(sorted(self.models.specs)) or 'none'}.")
        run_config = {"seed": self.seed, **(config or {})}
        await asyncio.to_thread(self.store.open_run, run_id, self.protocol.name, run_config, len(episodes),
                                {"concurrency": self.concurrency}, grows)
        self._share_calls(run_id)
        found = await asyncio.to_thread(self.store.finished_keys, run_id, not self.retry_failed)
        return found & set(keys)

    def _share_calls(self, run_id: str) -> None:
        """What the run's processes share about model calls: on a server store, its response cache (a machine
        replaying an episode reuses another's replies); and each limited model's rate budget."""
        if shares_cache(self.store):
            self.models.share_cache(StoreCache(self.store))
        if not self.rate_limits:
            return
        budgets: dict[str, Budget] = {}
        for spec, limit in self.rate_limits.items():
            budget = budgets[spec] = StoreBudget(self.store, run_id, spec, limit)
            budget.open()
        self.models.draw_on(budgets.get)

    async def _play(self, run_id: str, position: int, spec: EpisodeSpec,
                    key: str) -> tuple[EpisodeRecord, list[Event]]:
        seats: SeatMaker = self.seats
        if self.protocol.journal:
            replay = await asyncio.to_thread(self.store.episode_moves, run_id, key)

            async def record(player: str, idx: int, entry: dict[str, Any]) -> None:
                await asyncio.to_thread(self.store.add_episode_move, run_id, key, player, idx, entry)

            seats = JournaledSeats(self.seats, replay, record)
        ctx = EpisodeContext(spec=spec, seed=episode_seed(key, self.seed), make_seat=seats, run_seed=self.seed,
                             key=key)
        return await play_episode(self.protocol, ctx, run_id, position)


class _RunWide:
    """What the whole run did meanwhile, every process together, read at most every two seconds: the episodes other
    processes saved, and (with rate budgets) the run's calls and tokens a minute."""

    def __init__(self, store: Store, run_id: str, done_at_start: int | None, budgets: bool) -> None:
        self.store = store
        self.run_id = run_id
        self.done_at_start = done_at_start  # None: not countable (failed episodes were skipped too)
        self.budgets = budgets
        self._last = time.perf_counter()
        self._spent: tuple[float, int, int] | None = None  # when, requests, tokens at the last read

    async def start(self) -> None:
        """Read where the run's budgets stand as this process starts, so that the first rate is this run's."""
        if self.budgets:
            self._spent = await self._read_spent()

    async def _read_spent(self) -> tuple[float, int, int]:
        drawn = await asyncio.to_thread(spent, self.store, self.run_id)
        return time.perf_counter(), sum(d.requests for d in drawn), sum(d.tokens for d in drawn)

    async def count(self, summary: RunSummary, now: bool = False) -> bool:
        """Update ``summary``'s run-wide counts; whether they were read again."""
        if (self.done_at_start is None and not self.budgets) or (not now and time.perf_counter() - self._last < 2):
            return False
        self._last = time.perf_counter()
        if self.done_at_start is not None:
            info = await asyncio.to_thread(self.store.run, self.run_id)
            summary.by_others = max(0, info.done - self.done_at_start - summary.done)
        if self.budgets:
            reading = await self._read_spent()
            if self._spent is not None and reading[0] > self._spent[0]:
                minutes = (reading[0] - self._spent[0]) / 60
                summary.run_calls_per_minute = (reading[1] - self._spent[1]) / minutes
                summary.run_tokens_per_minute = (reading[2] - self._spent[2]) / minutes
            self._spent = reading
        return True
