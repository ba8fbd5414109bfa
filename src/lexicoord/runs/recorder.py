"""Collects one episode's events in order, including the model calls made on its behalf."""

from __future__ import annotations

from lexicoord.models.observe import ModelCallRecord
from lexicoord.runs.events import Event, ModelCallEvent


class Recorder:
    """Numbers events as they come; ``round`` stamps events emitted while a round is open."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.round: int | None = None

    def emit(self, event: Event) -> Event:
        event.seq = len(self.events)
        if event.round is None:
            event.round = self.round
        self.events.append(event)
        return event

    def on_model_call(self, call: ModelCallRecord) -> None:
        self.emit(ModelCallEvent(**dict(call)))

    def model_calls(self) -> list[ModelCallEvent]:
        return [e for e in self.events if isinstance(e, ModelCallEvent)]
