"""What a protocol gets for one episode: the item, settings and line-up, seats, a seeded RNG, and ``emit``.

The context is generic in the item it holds, ``EpisodeContext[ItemT]``: the episode's spec carries its item as
JSON (what the store keeps), and the protocol reads it once, as the episode starts, as its own item model
(:meth:`EpisodeContext.read_item`, called by :meth:`~lexicoord.core.protocol.Protocol.start`), so its rules read
``ctx.item.word`` checked by mypy rather than a key that may be missing. A context whose type names no item
holds the spec's ``dict[str, Any]``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, cast

from pydantic import BaseModel, TypeAdapter
from typing_extensions import TypeVar

from lexicoord.core.audience import Viewer, seat_viewer
from lexicoord.core.events import Event
from lexicoord.core.recorder import Recorder
from lexicoord.core.seat import Seat
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError

#: What ``ctx.item`` holds: the protocol's item model; a ``dict[str, Any]``, as the spec carries it, by default.
ItemT = TypeVar("ItemT", covariant=True, default=dict[str, Any])
ModelT = TypeVar("ModelT")

#: Builds the seat for a line-up entry (``system_prompt`` is the protocol's instructions to a model seat). Any
#: protocol's context may be handed to it; a seat kind of one protocol's own may name that protocol's item.
SeatMaker = Callable[[AgentSpec, "EpisodeContext[Any]", "str | None"], Seat]


class Control:
    """Signals from outside the rules: a front end asking the game to end. A live room journals them."""

    async def should_end(self) -> bool:
        return False


def _no_seats(spec: AgentSpec, ctx: EpisodeContext[Any], system_prompt: str | None) -> Seat:
    raise ConfigError(f"No seat maker was given, so seat '{spec.name}' cannot be filled.")


def _read(model: type[ModelT], item: dict[str, Any]) -> ModelT:
    """``item`` as ``model``: a pydantic model validates it; any other type (``dict``, ``dict[str, Any]``) goes
    through a type adapter."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_validate(item)
    return TypeAdapter(model).validate_python(item)


class _Unread:
    """The item of a context no protocol has read yet."""


_UNREAD = _Unread()


@dataclass
class EpisodeContext(Generic[ItemT]):
    spec: EpisodeSpec
    seed: int
    make_seat: SeatMaker = _no_seats
    recorder: Recorder = field(default_factory=Recorder)
    control: Control = field(default_factory=Control)
    #: The groups each seat belongs to (a protocol puts the wolves in ``wolves``); visibility reads them.
    groups: dict[str, set[str]] = field(default_factory=dict)
    #: The run's seed (``seed`` is this episode's, drawn from it and the episode's key): a protocol that pairs
    #: calls across the episodes of a run draws their seed from it (:meth:`paired_seed`).
    run_seed: int = 0
    #: The episode's key (``spec.key``, a hash of the whole spec), given by a maker that holds it already.
    key: str = ""

    def paired_seed(self, *parts: object) -> int:
        """A seed shared by every episode of the run that names the same ``parts`` (item, repetition, seat, step),
        whatever else differs between them (a variant, a condition)."""
        text = ":".join(map(str, (self.run_seed, self.spec.item_id, self.spec.repetition, *parts)))
        return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF

    def __post_init__(self) -> None:
        self.key = self.key or self.spec.key
        self.rng = random.Random(self.seed)
        self._item: object = _UNREAD

    @property
    def item(self) -> ItemT:
        """The item as the protocol's item model, read once as the episode started (``spec.item`` keeps the JSON)."""
        if isinstance(self._item, _Unread):
            raise RuntimeError(f"The item of episode {self.key!r} has not been read: a protocol's start(ctx) "
                               "reads it before play.")
        return cast(ItemT, self._item)

    def read_item(self, model: type[ModelT]) -> EpisodeContext[ModelT]:
        """This same context, its item read as ``model``: checked now, once, so that a bad item raises pydantic's
        ``ValidationError`` naming the field before the rules start. Seats made from the context, the recorder
        and the groups stay the ones its makers gave it: nothing is copied."""
        self._item = _read(model, self.spec.item)
        return cast("EpisodeContext[ModelT]", self)

    @property
    def settings(self) -> dict[str, Any]:
        return self.spec.settings

    def emit(self, event: Event) -> Event:
        return self.recorder.emit(event)

    def seat(self, spec: AgentSpec, system_prompt: str | None = None) -> Seat:
        """The seat for a line-up entry, whatever fills it (a model, a person, a simulated person)."""
        return self.make_seat(spec, self, system_prompt)

    def join(self, name: str, group: str) -> None:
        self.groups.setdefault(name, set()).add(group)

    def viewer(self, name: str | None) -> Viewer:
        return seat_viewer(name, frozenset(self.groups.get(name or "", ())))

    def visible_to(self, name: str | None) -> list[Event]:
        """Every event so far that seat ``name`` may see (``None``: a spectator, public events only)."""
        return self.recorder.visible_to(self.viewer(name))

    async def should_end(self) -> bool:
        return await self.control.should_end()
