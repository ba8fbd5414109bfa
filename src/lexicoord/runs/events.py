"""The typed record of an episode.

An episode's life is a list of events; every metric, table and figure is
computed from them, so a new analysis never needs a re-run. Each event type is
a versioned pydantic model; protocols add their own with :func:`event_type`.
Events of a type this installation does not know are read back as plain
:class:`Event` with all their fields kept.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.models.observe import ModelCallRecord


class Event(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str = "event"
    version: int = 1
    seq: int = 0
    ts: float = Field(default_factory=time.time)
    round: int | None = None
    agent: str | None = None

    def line(self) -> str | None:
        """One readable line for transcripts (plain text), or ``None`` to show the fields as they are.

        Protocols' own events override it, so a transcript reads well without the
        command line knowing every protocol.
        """
        return None


E = TypeVar("E", bound=type[Event])
_types: dict[str, type[Event]] = {}


def event_type(cls: E) -> E:
    """Register an event class under its ``type`` default so the store can read it back."""
    name = cls.model_fields["type"].default
    _types[name] = cls
    return cls


def event_from_dict(data: dict[str, Any]) -> Event:
    return _types.get(data.get("type", ""), Event).model_validate(data)


@event_type
class ModelCallEvent(Event, ModelCallRecord):
    """A model call with everything needed to audit it: prompt, raw reply, parse result, cost."""

    type: str = "model_call"


@event_type
class MessageEvent(Event):
    """Something an agent said; ``to`` is ``None`` for everyone, or the agents who can see it."""

    type: str = "message"
    content: str
    to: list[str] | None = None


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
