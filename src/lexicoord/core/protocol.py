"""What a protocol is: async rules that drive seats through one episode and emit events.

A protocol owns the rules (turns, convergence, termination, who may see what)
and nothing else: it neither stores nor prints. It receives an
:class:`~lexicoord.core.context.EpisodeContext` and returns its typed outcome.

A protocol is generic over the three types it deals in, ``Protocol[ItemT, SettingsT, OutcomeT]``: its item
model, its settings model and its outcome model. The episode's spec carries the item as JSON (the store keeps
it so); :meth:`Protocol.start` reads it as ``item_model`` once, as the episode starts, and ``play`` receives an
``EpisodeContext[ItemT]`` whose ``ctx.item`` is that model, so the rules read attributes mypy checks. A bad
item raises pydantic's ``ValidationError`` naming the field, which fails that episode only, as a bad setting
does. ``play`` returns ``OutcomeT``, and :meth:`Protocol.outcome_of` reads a stored episode's outcome back as
``OutcomeT``, so statistics get the outcome the rules returned, checked against the same model, without a
cast. A subclass that names no types (``class Echo(Protocol)``) gets the defaults: the item as the spec's
``dict[str, Any]``, and any ``BaseModel`` for settings and outcome.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Generic
from typing import Protocol as Structural

from pydantic import BaseModel
from typing_extensions import TypeVar

from lexicoord.core.context import EpisodeContext, ItemT, SeatMaker

SettingsT = TypeVar("SettingsT", bound=BaseModel, covariant=True, default=BaseModel)
OutcomeT = TypeVar("OutcomeT", bound=BaseModel, covariant=True, default=BaseModel)
ModelT = TypeVar("ModelT", bound=BaseModel)


class StoredEpisode(Structural):
    """Anything that carries a stored outcome, as the store's episode record does (``None``: none)."""

    @property
    def outcome(self) -> Mapping[str, Any] | None: ...


class _AnyModels:
    """The models of a protocol that names none: the item as the spec's dict, and any pydantic model for settings
    and outcome (the base of every protocol)."""

    item_model: type[Any] = dict
    settings_model: type[BaseModel] = BaseModel
    outcome_model: type[BaseModel] = BaseModel


class Protocol(_AnyModels, ABC, Generic[ItemT, SettingsT, OutcomeT]):
    """Subclasses name their types (``Protocol[MyItem, MySettings, MyOutcome]``), set ``name``, ``item_model``,
    ``settings_model`` and ``outcome_model`` to those models, and implement :meth:`play`."""

    name: ClassVar[str]
    item_model: type[ItemT]
    settings_model: type[SettingsT]
    outcome_model: type[OutcomeT]
    #: Seat kinds of this protocol's own (``simulated`` ...), besides the platform's ``llm`` and ``human``.
    seat_kinds: ClassVar[dict[str, SeatMaker]] = {}
    #: Long episodes: a campaign journals every answer as it comes, so an episode killed mid-way resumes where
    #: it stopped instead of from its start (a store write per answer; short episodes are better replayed).
    journal: ClassVar[bool] = False

    def start(self, ctx: EpisodeContext[Any]) -> EpisodeContext[ItemT]:
        """``ctx`` with its item read as ``item_model``, once, as the episode starts: what :meth:`play` receives.

        A bad item raises pydantic's ``ValidationError`` naming the field; played by
        :func:`~lexicoord.runs.episode.play_episode`, that fails this episode alone, recorded as a bad setting is.
        """
        return ctx.read_item(self.item_model)

    @abstractmethod
    async def play(self, ctx: EpisodeContext[ItemT]) -> OutcomeT:
        """Run one episode; return its outcome. Raising marks the episode failed."""

    def settings_of(self, ctx: EpisodeContext[Any]) -> SettingsT:
        """The episode's settings, checked against ``settings_model`` (a bad value raises, failing the episode)."""
        return _named(type(self), self.settings_model, "settings").model_validate(ctx.settings)

    @classmethod
    def outcome_of(cls, episode: StoredEpisode) -> OutcomeT:
        """A stored episode's outcome as ``outcome_model``, the type :meth:`play` returned.

        Stored outcomes are JSON, so they are checked again on the way back: a stored outcome that no longer
        fits the model (or a missing one) raises pydantic's ``ValidationError``, which names the field.
        """
        return _named(cls, cls.outcome_model, "outcome").model_validate(episode.outcome)


def _named(protocol: type[Protocol[Any, Any, Any]], model: type[ModelT], what: str) -> type[ModelT]:
    """``model``, when the protocol named one: plain ``BaseModel`` accepts any model but can read none."""
    if model is BaseModel:
        raise TypeError(f"{protocol.__name__} names no {what} model to read its {what} as.")
    return model
