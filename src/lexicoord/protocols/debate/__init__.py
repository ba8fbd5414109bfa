"""Ambiguity in robot instructions: a single-agent baseline and a leader-follower debate.

A run of the study mixes both conditions, so :class:`DebateStudy` plays each
episode under the protocol its settings name; the rules live in
:mod:`~lexicoord.protocols.debate.single` and :mod:`~lexicoord.protocols.debate.rules`.
"""

from __future__ import annotations

from lexicoord.core.context import EpisodeContext
from lexicoord.core.protocol import Protocol
from lexicoord.protocols.debate.common import DebateOutcome, DebateSettings
from lexicoord.protocols.debate.items import DebateItem
from lexicoord.protocols.debate.rules import LeaderFollowerDebate, rotations
from lexicoord.protocols.debate.single import SingleAgent


class DebateStudy(Protocol[DebateItem, DebateSettings, DebateOutcome]):
    name = "debate"
    item_model = DebateItem
    settings_model = DebateSettings
    outcome_model = DebateOutcome

    def __init__(self) -> None:
        self.single, self.debate = SingleAgent(), LeaderFollowerDebate()

    async def play(self, ctx: EpisodeContext[DebateItem]) -> DebateOutcome:
        condition = self.settings_of(ctx).condition
        return await (self.single if condition == "single" else self.debate).play(ctx)


def register() -> None:
    """The entry point: the debate study registers exactly as a third-party protocol would."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="debate",
        summary="Ambiguous robot instructions: a single-agent baseline and a leader-follower debate",
        title="Ambiguous robot instructions: a leader and a follower",
        protocol=DebateStudy,
        task="lexicoord.tasks.instructions:TASK",
        statistics="lexicoord.protocols.debate.statistics:statistics",
        outcomes="lexicoord.protocols.debate.statistics:outcomes",
        report="lexicoord.protocols.debate.report:report",
        room="lexicoord.protocols.debate.room:DebateRoom",
        experiment="lexicoord.protocols.debate.experiment:PLAN",
        cli="lexicoord.protocols.debate.cli:app",
    ))


__all__ = ["DebateOutcome", "DebateStudy", "DebateSettings", "LeaderFollowerDebate", "SingleAgent",
           "register", "rotations"]
