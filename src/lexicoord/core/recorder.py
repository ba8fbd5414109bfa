"""Collects one episode's events in order."""

from __future__ import annotations

from lexicoord.core.audience import Viewer, visible
from lexicoord.core.events import Event


class Recorder:
    """Numbers events as they come; ``round`` and ``phase`` stamp events emitted while they are open."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.round: int | None = None
        self.phase: str | None = None

    def emit(self, event: Event) -> Event:
        event.seq = len(self.events)
        # Only what changes is set: a pydantic assignment costs microseconds, and a campaign emits millions.
        if event.round is None and self.round is not None:
            event.round = self.round
        if event.phase is None and self.phase is not None:
            event.phase = self.phase
        self.events.append(event)
        return event

    def visible_to(self, viewer: Viewer) -> list[Event]:
        return list(visible(self.events, viewer))
