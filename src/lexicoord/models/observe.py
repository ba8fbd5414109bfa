"""Who is calling, and who is listening.

Model calls are recorded without callers passing a logger around: the runner
sets an observer for the episode's task, an agent sets its name around its
turn, and every :class:`~lexicoord.models.model.Model` call reports to the
observer in its context. Context variables are per asyncio task, so concurrent
episodes never mix their records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

from lexicoord.core.audience import Audience
from lexicoord.core.events import Event, event_type
from lexicoord.models.types import ChatMessage, Usage


class ModelCallRecord(BaseModel):
    """One model call as it happened: what was sent, what came back, what it cost."""

    model: str
    agent: str | None = None
    messages: list[ChatMessage]
    config: dict[str, Any] = Field(default_factory=dict)
    text: str | None = None
    parsed: Any = None
    parse_error: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    #: Why the backend stopped: ``stop``, ``length`` (the token limit cut the reply), ... (``None``: not said).
    finish_reason: str | None = None
    latency: float = 0.0
    cached: bool = False
    attempts: int = 0


Observer = Callable[[ModelCallRecord], None]

current_observer: ContextVar[Observer | None] = ContextVar("lexicoord_observer", default=None)
current_agent: ContextVar[str | None] = ContextVar("lexicoord_agent", default=None)


class acting_as:  # noqa: N801 - used as a function: ``with acting_as(name):``
    """Attribute the model calls made inside this block to ``agent``.

    A class rather than a generator-based context manager: it wraps every model call, and a generator
    costs several times as much to enter and leave.
    """

    __slots__ = ("agent", "_token")

    def __init__(self, agent: str) -> None:
        self.agent = agent

    def __enter__(self) -> None:
        self._token = current_agent.set(self.agent)

    def __exit__(self, *exc: object) -> None:
        current_agent.reset(self._token)


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    token = current_observer.set(observer)
    try:
        yield
    finally:
        current_observer.reset(token)


def report(record: ModelCallRecord) -> None:
    observer = current_observer.get()
    if observer is not None:
        observer(record)


class ModelCallEvent(Event, ModelCallRecord):
    """A model call with everything needed to audit it: prompt, raw reply, parse result, cost.

    Its prompt is the calling seat's own, so only that seat may see it.
    """

    type: str = "model_call"

    @classmethod
    def of(cls, record: ModelCallRecord) -> ModelCallEvent:
        return cls(**dict(record), audience=Audience.only(record.agent))


event_type(ModelCallEvent)
