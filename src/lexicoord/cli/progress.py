"""A run as the terminal shows it: a progress bar while it plays, its summary when it ends."""

from __future__ import annotations

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

from lexicoord.core.events import Event
from lexicoord.runs.progress import RunObserver
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.summary import RunSummary


class ProgressBar(RunObserver):
    """Finished (this process's, earlier runs' and other processes' alike) of the total, failed, episodes per
    minute played here, elapsed time, ETA and tokens; on standard error, so a command's output stays clean."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
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

    def episode_ended(self, record: EpisodeRecord, events: Sequence[Event], summary: RunSummary) -> None:
        elapsed = time.perf_counter() - self._started
        if elapsed > 0:
            self._rate = f"{summary.played / elapsed * 60:.1f}/min"
        self._draw(summary)

    def others_counted(self, summary: RunSummary) -> None:
        self._draw(summary)

    def ended(self, summary: RunSummary) -> None:
        self.bar.stop()
        for line in summary.lines():
            self.console.print(line, highlight=False, markup=False)

    def _draw(self, summary: RunSummary) -> None:
        if self._task is None:
            return
        self.bar.update(self._task, completed=summary.skipped + summary.played + summary.by_others,
                        failed=summary.failed, rate=self._rate, tokens=summary.prompt_tokens + summary.completion_tokens)
