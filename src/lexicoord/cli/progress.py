"""A run as the terminal shows it: a progress bar while it plays, its summary when it ends."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from lexicoord.cli.console import console_for
from lexicoord.core.events import Event
from lexicoord.runs.progress import RunObserver
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.summary import RunSummary


def log_every() -> float:
    """Seconds between the progress lines written to a log (``LEXICOORD_PROGRESS_SECONDS``, default 30)."""
    try:
        return max(0.1, float(os.environ.get("LEXICOORD_PROGRESS_SECONDS", "30")))
    except ValueError:
        return 30.0


class ProgressBar(RunObserver):
    """Finished (this process's, earlier runs' and other processes' alike) of the total, failed, episodes per
    minute played here (and the whole run's calls and tokens a minute when it has rate budgets), elapsed time,
    ETA and tokens; on standard error, so a command's output stays clean.

    A terminal keeps its live bar. Written to a file or a pipe (a cluster job's log), the bar would show only
    at the end, so a plain line says where the run stands every ``log_every()`` seconds, episodes ending or not."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or console_for(stderr=True)
        self._every = log_every()
        self._last: RunSummary | None = None
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self.bar = Progress(
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
            transient=False,
        )
        self._task: TaskID | None = None
        self._started = 0.0
        self._rate = ""  # episodes played here per minute

    def started(self, run_id: str, total: int, skipped: int) -> None:
        self._started = time.perf_counter()
        self._task = self.bar.add_task(escape(run_id), total=total, completed=skipped, failed=0, rate="", tokens=0)
        self.bar.start()
        if not self.console.is_terminal:
            self._heartbeat = threading.Thread(target=self._log, args=(run_id, total, skipped), daemon=True)
            self._heartbeat.start()

    def _log(self, run_id: str, total: int, skipped: int) -> None:
        """Every ``log_every()`` seconds until the run ends, one plain line: where the run stands."""
        while not self._stop.wait(self._every):
            s = self._last
            done = skipped if s is None else s.skipped + s.played + s.by_others
            failed = 0 if s is None else s.failed
            tokens = 0 if s is None else s.prompt_tokens + s.completion_tokens
            rate = self._rate if s is None else _with_run_rate(self._rate, s)
            self.console.print(f"{run_id}: {done}/{total} done, {failed} failed, {rate or '-'}, {tokens} tokens, "
                               f"{time.perf_counter() - self._started:.0f} s", highlight=False, markup=False,
                               soft_wrap=True)

    def episode_ended(self, record: EpisodeRecord, events: Sequence[Event], summary: RunSummary) -> None:
        elapsed = time.perf_counter() - self._started
        if elapsed > 0:
            self._rate = f"{summary.played / elapsed * 60:.1f}/min"
        self._draw(summary)

    def others_counted(self, summary: RunSummary) -> None:
        self._draw(summary)

    def ended(self, summary: RunSummary) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
        self.bar.stop()
        for line in summary.lines():
            self.console.print(line, highlight=False, markup=False)

    def _draw(self, summary: RunSummary) -> None:
        if self._task is None:
            return
        self._last = summary
        self.bar.update(self._task, completed=summary.skipped + summary.played + summary.by_others,
                        failed=summary.failed, rate=_with_run_rate(self._rate, summary), tokens=summary.prompt_tokens + summary.completion_tokens)


def _with_run_rate(rate: str, summary: RunSummary) -> str:
    """Episodes a minute played here, and, when the run draws on rate budgets, the whole run's calls and tokens a
    minute, every process together (what the provider sees)."""
    if summary.run_calls_per_minute is None:
        return rate
    run = f"run {summary.run_calls_per_minute:,.0f} calls/min, {summary.run_tokens_per_minute or 0:,.0f} tok/min"
    return f"{rate}, {run}" if rate else run
