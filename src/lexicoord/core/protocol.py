"""What a protocol is: async rules that drive seats through one episode and emit events.

A protocol owns the rules (turns, convergence, termination, who may see what)
and nothing else: it neither stores nor prints. It receives an
:class:`~lexicoord.core.context.EpisodeContext` and returns its typed outcome.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from pydantic import BaseModel

from lexicoord.core.context import EpisodeContext, SeatMaker


class Protocol(ABC):
    """Subclasses set ``name``, ``settings_model`` and ``outcome_model`` and implement :meth:`play`."""

    name: ClassVar[str]
    settings_model: ClassVar[type[BaseModel]] = BaseModel
    outcome_model: ClassVar[type[BaseModel]] = BaseModel
    #: Seat kinds of this protocol's own (``simulated`` ...), besides the platform's ``llm`` and ``human``.
    seat_kinds: ClassVar[dict[str, SeatMaker]] = {}
    #: Long episodes: a campaign journals every answer as it comes, so an episode killed mid-way resumes where
    #: it stopped instead of from its start (a store write per answer; short episodes are better replayed).
    journal: ClassVar[bool] = False

    @abstractmethod
    async def play(self, ctx: EpisodeContext) -> BaseModel:
        """Run one episode; return its outcome. Raising marks the episode failed."""
