"""What one process's run came to: the counts an observer shows as it goes and the lines printed at the end."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from lexicoord.core.events import ErrorEvent, Event
from lexicoord.runs.records import EpisodeRecord


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
    #: The whole run's draw on its models' rate budgets, every process together, per minute over the last few
    #: seconds (``None``: the run has no budget). Read from the store (see runs/rate_budget.py).
    run_calls_per_minute: float | None = None
    run_tokens_per_minute: float | None = None

    @property
    def played(self) -> int:
        """Episodes this process played and saved (done or failed)."""
        return self.done + self.failed

    def count(self, record: EpisodeRecord, events: Sequence[Event]) -> None:
        """Add one saved episode: its calls, tokens and failed moves; its failure, if it failed, and whose."""
        self.model_calls += record.model_calls
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens
        for e in events:
            # The fields as stored: asking an event for a field its type lacks costs an exception each time, and
            # this runs on the event loop for every event of every episode saved.
            fields = e.__dict__
            self.cached_calls += bool(fields.get("cached"))
            if e.agent and fields.get("failure") and not isinstance(e, ErrorEvent):
                self.failed_moves[e.agent] = self.failed_moves.get(e.agent, 0) + 1
        if record.status == "done":
            self.done += 1
            return
        self.failed += 1
        seat = next((e.agent for e in events if isinstance(e, ErrorEvent) and e.agent), None)
        if seat:
            self.failed_by_seat[seat] = self.failed_by_seat.get(seat, 0) + 1
        self.errors.append(f"{record.item_id} (rep {record.repetition}): {record.error}")

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
        return out  # an interruption is told once, by the command that was interrupted (``cli.options.run_async``)
