"""Same word in a live room: lexicoord's room of written turns (Start, the answer form, the transcript) and its
page part, with a part of its own on top (``room.js``: the thing to name, drawn large); this module gives the
room's own settings and the six things a turn room names."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.web.adapters.turns import TURNS_SCRIPT, TurnsRoom
from lexicoord.web.settings import RoomSettings
from same_word_game.rules import SameWord, SameWordSettings

if TYPE_CHECKING:
    from lexicoord.web.services import Services


class SameWordRoomSettings(RoomSettings):
    things: str = Field(default="builtin", max_length=60, description="Things (a set this server serves)")
    max_tokens: int = Field(default=20, ge=4, le=200, description="A model's longest word, in tokens")

    @classmethod
    def choices(cls, services: Services) -> dict[str, list[Any]]:
        return {"things": services.item_sets("same-word")}

    def check(self, services: Services) -> None:
        super().check(services)
        services.items_of("same-word", self.things)  # a set the server does not serve is refused by name

    def check_table(self, seats: list[str]) -> None:
        if len(seats) < 2:
            raise ConfigError("Same word needs two seats at least: invite someone or add an agent.")

    def run_config(self) -> dict[str, Any]:
        return {"things": self.things, "models": sorted({a.model for a in self.agents}), "settings": self.rules()}

    def rules(self) -> dict[str, Any]:
        return SameWordSettings(max_tokens=self.max_tokens).model_dump()


class SameWordRoom(TurnsRoom):
    protocol = "same-word"
    #: The turn rooms' page part, then this room's own, which draws the thing to name its own way.
    scripts = (TURNS_SCRIPT, Path(__file__).with_name("room.js"))
    settings_model = SameWordRoomSettings

    @property
    def same_word(self) -> SameWordRoomSettings:
        assert isinstance(self.room.settings, SameWordRoomSettings)
        return self.room.settings

    def protocol_instance(self) -> SameWord:
        return SameWord()

    def next_item(self) -> dict[str, Any]:
        things = self.room.services.items_of("same-word", self.same_word.things)
        item: dict[str, Any] = things[self.state.cursor % len(things)]
        return item

    def seats(self, people: list[str], agents: list[AgentSpec]) -> list[AgentSpec]:
        return [AgentSpec(name=p, kind="human") for p in people] + agents

    def game_settings(self) -> dict[str, Any]:
        return self.same_word.rules()

    def item_view(self, item: dict[str, Any]) -> dict[str, Any]:
        return {"thing": item.get("thing", "")}

    def outcome_text(self, item: dict[str, Any], outcome: dict[str, Any]) -> str:
        words = ", ".join(f"{name}: {word or '-'}" for name, word in outcome.get("words", {}).items())
        return f"{'agreed' if outcome.get('agreed') else 'did not agree'} ({words})"
