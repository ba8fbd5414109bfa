"""The debate study: each episode played under the condition its settings name (a single agent, or the
leader-follower debate), so one run holds both conditions, paired by item."""

from __future__ import annotations

from lexicoord.core.context import EpisodeContext
from lexicoord.core.protocol import Protocol
from lexicoord.protocols.debate.common import DebateOutcome, DebateSettings
from lexicoord.protocols.debate.items import DebateItem
from lexicoord.protocols.debate.rules import LeaderFollowerDebate
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
