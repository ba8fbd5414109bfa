"""Ambiguity in robot instructions: a single-agent baseline and a leader-follower debate.

A run of the study mixes both conditions, so :class:`AmbiguityStudy` plays each
episode under the protocol its settings name; the rules live in
:mod:`~lexicoord.protocols.debate.single` and :mod:`~lexicoord.protocols.debate.rules`.
"""

from __future__ import annotations

from typing import Any

from lexicoord.protocols.base import EpisodeContext, Protocol
from lexicoord.protocols.debate.common import DebateSettings
from lexicoord.protocols.debate.rules import LeaderFollowerDebate, rotations
from lexicoord.protocols.debate.single import SingleAgent


class AmbiguityStudy(Protocol):
    name = "ambiguity"

    def __init__(self) -> None:
        self.single, self.debate = SingleAgent(), LeaderFollowerDebate()

    async def play(self, ctx: EpisodeContext) -> dict[str, Any]:
        condition = DebateSettings(**ctx.settings).condition
        return await (self.single if condition == "single" else self.debate).play(ctx)


__all__ = ["AmbiguityStudy", "DebateSettings", "LeaderFollowerDebate", "SingleAgent", "rotations"]
