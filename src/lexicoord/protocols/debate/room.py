"""The leader-follower debate in a live room: people lead or follow beside LLM seats on a robot instruction.

The instructions are generated on the tabletop scene (the paper's three types, each
ambiguous instruction beside its precise twin), taken in turn from each type; the
room's leader leads the debate when ``people_lead`` is set, the other people follow,
and the room's agents fill the remaining seats. Each person sees the scene, the
instruction, the leader's proposals, and their own feedback (and the leader everyone's,
as in the paper); a person's answer is checked against the schema a model's is.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import Field

from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.protocols.debate import DebateStudy
from lexicoord.protocols.debate.common import DebateSettings
from lexicoord.tasks.instructions import generated_instructions
from lexicoord.web.adapters.turns import TURNS_SCRIPT, TurnsRoom
from lexicoord.web.settings import RoomSettings


class DebateRoomSettings(RoomSettings):
    people_lead: bool = Field(default=True, description="The room's leader leads the debate (else an agent leads)")
    rounds: int = Field(default=3, ge=1, le=10, description="Most rounds of the debate (R)")
    twins: bool = Field(default=True, description="Play the precise twins of ambiguous instructions too")

    def run_config(self) -> dict[str, Any]:
        return {"dataset": "generated (room)", "models": sorted({a.model for a in self.agents}),
                "conditions": ["debate"], "settings": self.rules()}

    def rules(self) -> dict[str, Any]:
        return DebateSettings(condition="debate", rounds=self.rounds).model_dump(exclude_none=True)


class DebateRoom(TurnsRoom):
    protocol = "debate"
    scripts = (TURNS_SCRIPT,)
    settings_model = DebateRoomSettings

    @property
    def debate(self) -> DebateRoomSettings:
        assert isinstance(self.room.settings, DebateRoomSettings)
        return self.room.settings

    def protocol_instance(self) -> Protocol[Any, Any, Any]:
        return DebateStudy()

    def next_item(self) -> dict[str, Any]:
        pool = generated_instructions(3, self.debate.seed, unambiguous=self.debate.twins)
        order = random.Random(self.debate.seed).sample(range(len(pool)), len(pool))
        return pool[order[self.state.cursor % len(pool)]].as_task()

    def seats(self, people: list[str], agents: list[AgentSpec]) -> list[AgentSpec]:
        humans = [AgentSpec(name=p, kind="human") for p in people]
        ordered = humans + agents if self.debate.people_lead or not agents else [agents[0], *humans, *agents[1:]]
        if len(ordered) < 2:
            from lexicoord.web.adapters.base import AdapterError

            raise AdapterError("too_few", "A debate needs a leader and at least one follower: invite someone or add agents.")
        return [s.model_copy(update={"role": "leader" if i == 0 else "follower"}) for i, s in enumerate(ordered)]

    def game_settings(self) -> dict[str, Any]:
        return self.debate.rules()

    def item_view(self, item: dict[str, Any]) -> dict[str, Any]:
        return {"scene": item.get("context", ""), "instruction": item.get("instruction", "")}

    def outcome_text(self, item: dict[str, Any], outcome: dict[str, Any]) -> str:
        ended = "consensus" if outcome.get("consensus") else str(outcome.get("termination", "ended"))
        question = f" asking: {outcome['question']}" if outcome.get("question") else ""
        truth = "ambiguous" if item.get("ambiguous") else "precise"
        right = "detected" if outcome.get("verdict") == "ambiguous" else "not detected"
        verdict = f"{outcome.get('verdict') or 'no verdict'}{question}"
        judged = f"; the instruction was {truth}" + (f", ambiguity {right}" if item.get("ambiguous") else "")
        return f"{ended} after {outcome.get('rounds', '?')} round(s): {verdict}{judged}"
