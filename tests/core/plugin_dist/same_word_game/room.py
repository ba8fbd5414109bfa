"""Same word in a live room: lexicoord's shared room of written turns, drawn by this package's own page part."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.web.adapters.turns import TurnsRoom
from same_word_game.cli import THINGS
from same_word_game.rules import SameWord


class SameWordRoom(TurnsRoom):
    protocol = "same-word"
    script = Path(__file__).with_name("room.js")

    def protocol_instance(self) -> Protocol:
        return SameWord()

    def next_item(self) -> dict[str, Any]:
        return {"id": f"t{self.state.cursor % len(THINGS)}", "thing": THINGS[self.state.cursor % len(THINGS)]}

    def seats(self, people: list[str], agents: list[AgentSpec]) -> list[AgentSpec]:
        return [AgentSpec(name=p, kind="human") for p in people] + agents

    def game_settings(self) -> dict[str, Any]:
        return {}

    def item_view(self, item: dict[str, Any]) -> dict[str, Any]:
        return {"thing": item.get("thing", "")}

    def outcome_text(self, item: dict[str, Any], outcome: dict[str, Any]) -> str:
        return "agreed" if outcome.get("agreed") else "did not agree"
