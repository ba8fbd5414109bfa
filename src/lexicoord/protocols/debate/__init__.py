"""Ambiguity in robot instructions: a single-agent baseline and a leader-follower debate.

A run of the study mixes both conditions, so :class:`AmbiguityStudy` plays each
episode under the protocol its settings name; the rules live in
:mod:`~lexicoord.protocols.debate.single` and :mod:`~lexicoord.protocols.debate.rules`.
"""

from __future__ import annotations

from lexicoord.core.context import EpisodeContext
from lexicoord.core.protocol import Protocol
from lexicoord.protocols.debate.common import AmbiguityOutcome, DebateSettings
from lexicoord.protocols.debate.rules import LeaderFollowerDebate, rotations
from lexicoord.protocols.debate.single import SingleAgent


class AmbiguityStudy(Protocol):
    name = "ambiguity"
    settings_model = DebateSettings
    outcome_model = AmbiguityOutcome

    def __init__(self) -> None:
        self.single, self.debate = SingleAgent(), LeaderFollowerDebate()

    async def play(self, ctx: EpisodeContext) -> AmbiguityOutcome:
        condition = DebateSettings(**ctx.settings).condition
        return await (self.single if condition == "single" else self.debate).play(ctx)


def register() -> None:
    """The entry point: the ambiguity study registers exactly as a third-party protocol would."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="ambiguity",
        summary="Ambiguous robot instructions: a single-agent baseline and a leader-follower debate",
        protocol=AmbiguityStudy,
        task="lexicoord.tasks.instructions:TASK",
        statistics="lexicoord.analysis.debate:statistics",
        report="lexicoord.analysis.debate_report:report",
        room="lexicoord.web.adapters.debate:DebateRoom",
    ))


__all__ = ["AmbiguityOutcome", "AmbiguityStudy", "DebateSettings", "LeaderFollowerDebate", "SingleAgent",
           "register", "rotations"]
