"""Runs a grid of episodes: bounded concurrency, a progress bar, atomic saves, resume.

Each episode ends in exactly one transaction (:meth:`Store.save_episode`): done
with its outcome, or failed with its error; both keep every event emitted so
far. Re-running a run skips its done episodes and plays the rest (failed ones
included, unless ``retry_failed=False``). An interrupt (Ctrl-C, a kill)
loses only the episodes in flight, which the next run plays again.

Several processes, on one machine or many, started with the same run name on
the same store share its episodes: each is claimed through the database by one
process at a time (:mod:`lexicoord.runs.claims`), and a process killed outright
leaves its claims to expire, after which another process plays them again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from lexicoord.core.context import EpisodeContext, SeatMaker
from lexicoord.core.events import ErrorEvent, Event
from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import EpisodeSpec
from lexicoord.errors import LexicoordError
from lexicoord.models.pool import ModelPool
from lexicoord.runs.claims import Claims, lease_from_env
from lexicoord.runs.episode import play_episode, short_error
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store
from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.journal import JournaledSeats

log = logging.getLogger(__name__)


class RunSummary(BaseModel):
    run_id: str
    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    interrupted: bool = False
    wall_time: float = 0.0
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = []
    #: Episodes of this run that other processes saved while this one ran (see runs/claims.py).
    by_others: int = 0
    #: Moves that failed inside episodes that went on (a reply that did not parse, a person out of time), by
    #: seat; and episodes failed by a seat's model giving no reply at all (unreachable, 5xx, timeouts), by seat.
    failed_moves: dict[str, int] = {}
    failed_by_seat: dict[str, int] = {}

    def lines(self) -> list[str]:
        rate = self.done / self.wall_time if self.wall_time > 0 else 0.0
        out = [
            f"run {self.run_id}: {self.done} done, {self.failed} failed, {self.skipped} already done"
            + (f", {self.by_others} done by other processes" if self.by_others else "")
            + f" (of {self.total}) in {self.wall_time:.1f} s ({rate:.2f} episodes/s)",
            f"model calls: {self.model_calls} ({self.cached_calls} from cache); tokens: "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion",
        ]
        if self.failed_moves:
            by = ", ".join(f"{k} {v}" for k, v in sorted(self.failed_moves.items()))
            out.append(f"failed moves in played episodes (unparseable replies, no answer in time): "
                       f"{sum(self.failed_moves.values())} ({by})")
        if self.failed_by_seat:
            by = ", ".join(f"{k} {v}" for k, v in sorted(self.failed_by_seat.items()))
            out.append(f"episodes failed because a seat's model gave no reply: {by}; re-running the same "
                       "command plays them again")
        out += [f"failed: {e}" for e in self.errors[:5]]
        if len(self.errors) > 5:
            out.append(f"... and {len(self.errors) - 5} more failures (see 'lexicoord runs show {self.run_id}')")
        if self.interrupted:
            out.append("interrupted: finished episodes are saved; run the same command again to resume.")
        return out


class Runner:
    def __init__(
        self,
        store: Store,
        protocol: Protocol,
        *,
        models: ModelPool | None = None,
        concurrency: int = 4,
        seed: int = 0,
        retry_failed: bool = True,
        progress: bool = True,
        console: Console | None = None,
        people: dict[str, HumanSeat] | None = None,
        lease: float | None = None,
    ) -> None:
        self.store = store
        #: Seconds a claim on an episode lasts without renewal (``LEXICOORD_CLAIM_SECONDS``; see runs/claims.py).
        self.lease = lease if lease is not None else lease_from_env()
        self.protocol = protocol
        self.models = models or ModelPool()
        self.concurrency = max(1, concurrency)
        self.seed = seed
        self.retry_failed = retry_failed
        self.progress = progress
        self.console = console or Console(stderr=True)
        #: Seats people fill (a terminal game binds one); every other seat is made for its episode.
        self.seats = SeatFactory(self.models, people=people, own_kinds=protocol.seat_kinds)

    async def run(
        self, run_id: str, episodes: Sequence[EpisodeSpec], config: dict[str, Any] | None = None
    ) -> RunSummary:
        keys = [e.key for e in episodes]
        if len(set(keys)) != len(keys):
            raise LexicoordError("The run lists the same episode twice (same item, settings, line-up and repetition).")
        # Resolve every model named in the line-ups now: a missing key or server address is
        # one clear error before the run starts, not a failure in every episode.
        for spec in {a.model for e in episodes for a in e.lineup if a.kind == "llm" and a.model}:
            self.models.get(spec)
        run_config = {"seed": self.seed, **(config or {})}
        await asyncio.to_thread(self.store.open_run, run_id, self.protocol.name, run_config, len(episodes),
                                {"concurrency": self.concurrency})
        done_keys = await asyncio.to_thread(self.store.finished_keys, run_id, not self.retry_failed)
        todo = [(i, e) for i, e in enumerate(episodes) if e.key not in done_keys]
        summary = RunSummary(run_id=run_id, total=len(episodes), skipped=len(episodes) - len(todo))
        started = time.perf_counter()
        # The work is shared through the store (runs/claims.py), so other processes on this run take part.
        claims = Claims(self.store, run_id, lease=self.lease, skip=("done",) if self.retry_failed else ("done", "failed"))
        await asyncio.to_thread(claims.offer, [(e.key, i) for i, e in todo])
        by_key = {e.key: (i, e) for i, e in enumerate(episodes)}
        holding: set[str] = set()  # claimed here and not yet saved: renewed until they are
        foreign: set[str] = set()  # offered by another process with a grid this one does not have
        done_at_start = sum(1 for k in done_keys if k in by_key) if self.retry_failed else None
        finished: asyncio.Queue[tuple[EpisodeRecord, list[Event]] | None] = asyncio.Queue()

        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[tokens]} tok"),
            console=self.console,
            disable=not self.progress,
            transient=False,
        )
        task = progress.add_task(
            escape(run_id), total=len(episodes), completed=summary.skipped, failed=0, rate="", tokens=0
        )

        def account(record: EpisodeRecord, events: list[Event]) -> None:
            summary.model_calls += record.model_calls
            summary.cached_calls += sum(1 for e in events if getattr(e, "cached", False))
            summary.prompt_tokens += record.prompt_tokens
            summary.completion_tokens += record.completion_tokens
            for e in events:
                if e.agent and getattr(e, "failure", None) and not isinstance(e, ErrorEvent):
                    summary.failed_moves[e.agent] = summary.failed_moves.get(e.agent, 0) + 1
            if record.status == "done":
                summary.done += 1
            else:
                summary.failed += 1
                seat = next((e.agent for e in events if isinstance(e, ErrorEvent) and e.agent), None)
                if seat:
                    summary.failed_by_seat[seat] = summary.failed_by_seat.get(seat, 0) + 1
                summary.errors.append(f"{record.item_id} (rep {record.repetition}): {record.error}")
            elapsed = time.perf_counter() - started
            played = summary.done + summary.failed
            progress.update(
                task,
                completed=summary.skipped + played,
                failed=summary.failed,
                rate=f"{played / elapsed * 60:.1f}/min" if elapsed > 0 else "",
                tokens=summary.prompt_tokens + summary.completion_tokens,
            )

        async def save(entries: list[tuple[EpisodeRecord, list[Event]]]) -> None:
            try:
                await asyncio.to_thread(self.store.save_episodes, entries)
            except Exception as exc:
                if len(entries) > 1:  # save the good ones; find the one that cannot be saved
                    for entry in entries:
                        await save([entry])
                    return
                record, _ = entries[0]
                failure = f"the episode could not be saved: {short_error(exc)}"
                log.exception("run %s: %s", run_id, failure)
                record = record.model_copy(update={"status": "failed", "error": failure, "outcome": None})
                entries = [(record, [ErrorEvent(message=failure, error_type="StoreError")])]
                await asyncio.to_thread(self.store.save_episodes, entries)
            for record, events in entries:
                holding.discard(record.key)
                account(record, events)
            await show_others()

        refreshed = [time.perf_counter()]

        async def show_others(now: bool = False) -> None:
            """Count episodes other processes saved in the bar and the summary too, at most every two seconds."""
            if done_at_start is None or (not now and time.perf_counter() - refreshed[0] < 2):
                return
            refreshed[0] = time.perf_counter()
            info = await asyncio.to_thread(self.store.run, run_id)
            summary.by_others = max(0, info.done - done_at_start - summary.done)
            progress.update(task, completed=summary.skipped + summary.done + summary.failed + summary.by_others)

        async def writer() -> None:
            """Saves ended episodes in batches, so playing never waits on the disk."""
            stop = False
            while not stop:
                batch = [await finished.get()]
                while not finished.empty():
                    batch.append(finished.get_nowait())
                stop = None in batch
                entries = [b for b in batch if b is not None]
                if entries:
                    await save(entries)

        # Claims are taken a few ahead, so a worker that ends an episode starts the next at once instead of
        # waiting on the database (on SQLite, possibly behind a save); a process keeps at most this many
        # episodes claimed beyond the ones it plays.
        ahead = max(1, self.concurrency // 4)
        ready: list[str] = []
        refilling: asyncio.Task[bool] | None = None

        async def refill(n: int) -> bool:
            taken = await asyncio.to_thread(claims.take, foreign, n)
            holding.update(taken)  # renewed from now on
            ready.extend(taken)
            return bool(taken)

        async def next_key() -> str | None:
            """The next claimed episode, or None when nothing is free now."""
            nonlocal refilling
            while True:
                if ready:
                    key = ready.pop(0)
                    if len(ready) < ahead and (refilling is None or refilling.done()):
                        refilling = asyncio.create_task(refill(ahead))
                    return key
                if refilling is None or refilling.done():
                    refilling = asyncio.create_task(refill(ahead + 1))
                if not await asyncio.shield(refilling) and not ready:
                    return None

        async def worker() -> None:
            while True:
                key = await next_key()
                if key is None:
                    left = await asyncio.to_thread(claims.remaining, foreign)
                    if left.free:
                        continue
                    if not left.held:
                        return  # every episode is saved or being played here
                    # Another process holds the rest: wait for it to save them, or for its claims to expire.
                    await asyncio.sleep(min(max(left.next_expiry - time.time(), 0.05), 1.0))
                    continue
                if key not in by_key:
                    foreign.add(key)
                    holding.discard(key)
                    await asyncio.to_thread(claims.give_back, key)
                    continue
                position, spec = by_key[key]
                finished.put_nowait(await self._play(run_id, position, spec))

        async def renew() -> None:
            while True:
                await asyncio.sleep(claims.lease / 4)
                if holding:
                    kept = await asyncio.to_thread(claims.renew, set(holding))
                    if kept < len(holding):
                        log.warning("run %s: %d claim(s) expired and went to another process", run_id,
                                    len(holding) - kept)

        workers = [asyncio.create_task(worker()) for _ in range(min(self.concurrency, len(todo)) or 1)]
        renewing = asyncio.create_task(renew())
        writing = asyncio.create_task(writer())
        # If saving fails for good (the database is gone), stop playing episodes nobody can keep.
        writing.add_done_callback(lambda t: [w.cancel() for w in workers] if not t.cancelled() and t.exception() else None)
        status = "interrupted"
        try:
            with progress:
                await asyncio.gather(*workers)
                finished.put_nowait(None)
                await asyncio.shield(writing)
                await show_others(now=True)
            status = "finished"
        except BaseException:
            summary.interrupted = True
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            if not writing.done():
                # Episodes that ended before the interrupt are still saved.
                finished.put_nowait(None)
                await asyncio.gather(writing, return_exceptions=True)
            raise
        finally:
            renewing.cancel()
            if refilling is not None:
                await asyncio.gather(refilling, return_exceptions=True)
            summary.wall_time = time.perf_counter() - started
            # Claims still held (an interrupt; one taken ahead at the end) go back, so others need not wait
            # for them to expire. While another process still plays the run, an interrupted one leaves it
            # "running", and the last process to finish marks it.
            await asyncio.to_thread(claims.release)
            if status == "interrupted" and (await asyncio.to_thread(claims.remaining, foreign)).held:
                status = "running"
            await asyncio.to_thread(self.store.set_run_status, run_id, status)
            await self.models.aclose()
            if self.progress:
                for line in summary.lines():
                    self.console.print(line, highlight=False, markup=False)
        return summary

    async def _play(self, run_id: str, position: int, spec: EpisodeSpec) -> tuple[EpisodeRecord, list[Event]]:
        seats: SeatMaker = self.seats
        if self.protocol.journal:
            replay = await asyncio.to_thread(self.store.episode_moves, run_id, spec.key)

            async def record(player: str, idx: int, entry: dict[str, Any]) -> None:
                await asyncio.to_thread(self.store.add_episode_move, run_id, spec.key, player, idx, entry)

            seats = JournaledSeats(self.seats, replay, record)
        ctx = EpisodeContext(spec=spec, seed=spec.seed(self.seed), make_seat=seats)
        return await play_episode(self.protocol, ctx, run_id, position)
