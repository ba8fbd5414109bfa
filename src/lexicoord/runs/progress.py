"""What a run tells whoever watches it. The runner draws nothing itself: a command line gives it a bar
(``lexicoord.cli.progress``), a test or a service gives what it needs, and a run given nothing is silent."""

from __future__ import annotations

from collections.abc import Sequence

from lexicoord.core.events import Event
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.summary import RunSummary


class RunObserver:
    """Watches one run. Every method is called on the run's event loop and must not block it; this base class
    hears everything and does nothing, so an observer overrides only what it shows."""

    def started(self, run_id: str, total: int, skipped: int) -> None:
        """The run begins: ``total`` episodes in its grid, ``skipped`` of them already finished."""

    def episode_ended(self, record: EpisodeRecord, events: Sequence[Event], summary: RunSummary) -> None:
        """An episode was saved, done or failed, as stored; ``summary`` already counts it."""

    def others_counted(self, summary: RunSummary) -> None:
        """``summary.by_others`` was read again: episodes other processes on the run have saved meanwhile."""

    def ended(self, summary: RunSummary) -> None:
        """The run is over for this process (finished, interrupted or stopped by an error); always called."""
