"""The typed record of an episode.

An episode's life is a list of events; every metric, table and figure is
computed from them, so a new analysis never needs a re-run. Each event type is
a versioned pydantic model registered under its ``type``; each carries its
audience (who may see it) and its phase. Types are registered by the modules
that define them; the store asks :func:`event_from_dict`, which first loads
every installed protocol and event module, so a stored event reads back typed
whatever happened to be imported before. An event of a type nobody installed
reads back as plain :class:`Event` with all its fields kept.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.core.audience import EVERYONE, Audience
from lexicoord.core.plugins import Registry

#: Entry-point group of modules that define event types outside a protocol (the model layer's calls).
EVENTS_GROUP = "lexicoord.events"


class Event(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str = "event"
    version: int = 1
    seq: int = 0
    ts: float = Field(default_factory=time.time)
    round: int | None = None
    #: The protocol's phase when the event happened (``round``, ``night``, ``day``, ``coin``, ``use`` ...).
    phase: str | None = None
    agent: str | None = None
    audience: Audience = EVERYONE

    def line(self) -> str | None:
        """One readable line for transcripts (plain text), or ``None`` to show the fields as they are.

        Protocols' own events override it, so a transcript reads well without the
        command line knowing every protocol.
        """
        return None


E = TypeVar("E", bound=Event)
_types: Registry[type[Event]] = Registry("event type", EVENTS_GROUP, call=False)


def event_type(cls: type[E]) -> type[E]:
    """Register an event class under its ``type`` default so the store can read it back."""
    _types.register(cls.model_fields["type"].default, cls, f"{cls.__module__}.{cls.__qualname__}")
    return cls


def load_event_types() -> None:
    """Import every installed protocol's rules and every event module once, so that each registers its event
    types (a protocol's rules are otherwise imported only when used: see core/registry.py)."""
    from lexicoord.core.registry import protocols

    for entry in protocols().values():
        entry.rules()
    _types.load()


def registered_types() -> dict[str, type[Event]]:
    load_event_types()
    return dict(_types.entries)


def event_from_dict(data: dict[str, Any]) -> Event:
    kind = data.get("type", "")
    if kind not in _types.entries:  # a type already known reads back without importing every plugin
        load_event_types()
    return _types.entries.get(kind, Event).model_validate(data)


@event_type
class MessageEvent(Event):
    """Something an agent said, to the event's audience."""

    type: str = "message"
    content: str


@event_type
class ChoiceEvent(Event):
    """An agent's pick among options, with its justification; ``choice`` is ``None`` for no valid pick."""

    type: str = "choice"
    choice: str | None
    justification: str = ""
    options: list[str] = Field(default_factory=list)
    failure: str | None = None
    raw: str | None = None


@event_type
class RoundClosedEvent(Event):
    type: str = "round_closed"
    summary: dict[str, Any] = Field(default_factory=dict)


@event_type
class OutcomeEvent(Event):
    type: str = "outcome"
    outcome: dict[str, Any] = Field(default_factory=dict)


@event_type
class ErrorEvent(Event):
    type: str = "error"
    message: str
    error_type: str = ""
    raw: str | None = None


__all__ = [
    "ChoiceEvent", "ErrorEvent", "Event", "MessageEvent", "OutcomeEvent", "RoundClosedEvent", "event_from_dict",
    "event_type", "load_event_types", "registered_types",
]
