"""COGENT in a live room: a person as agent A or B (or both seats people) coins, shares and uses terms.

A game is one item: from a benchmark file the operator served (``--benchmark
gsm8k=PATH``), or a question the room's creator typed with its answer. The coining
passes show each person the rules as a model reads them (``term = definition``,
used in PART 1), and the transcript shows each candidate accepted or rejected with
its reason, the shared board as it grows, the use rounds, the final answer and
whether it is right, each line only to the seats that may read it. The rounds are
shorter by default than the paper's (R, K, R_c = 2, 1, 1) so a person's game takes
minutes; the creator may set the paper's 3, 2, 2.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import Field

from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.protocols.cogent import CogentStudy
from lexicoord.protocols.cogent.rules import CogentSettings
from lexicoord.tasks.benchmarks import BENCHMARKS, MathItem
from lexicoord.web.adapters.base import AdapterError
from lexicoord.web.adapters.turns import TURNS_SCRIPT, TurnsRoom
from lexicoord.web.services import Services
from lexicoord.web.settings import RoomSettings

TYPED = "typed"


class CogentRoomSettings(RoomSettings):
    source: str = Field(default=TYPED, max_length=20, description="Items (a benchmark the server serves, or typed)")
    variant: Literal["cogent", "vanilla", "cogent_private", "cogent_free"] = Field(default="cogent", description="Variant")
    people_sit: Literal["B", "A", "A and B"] = Field(default="B", description="Seats people take")
    question: str = Field(default="", max_length=1000, description="Typed question (arithmetic, GSM8K style)")
    answer: str = Field(default="", max_length=40, description="Typed question's answer (a number)")
    rounds: int = Field(default=2, ge=1, le=5, description="Meta-rounds R")
    passes: int = Field(default=1, ge=0, le=3, description="Coining passes K per active round")
    coin_rounds: int = Field(default=1, ge=0, le=5, description="Coining-active rounds R_c")
    max_tokens: int = Field(default=512, ge=16, le=2048, description="Tokens an agent's reply may take")


    @classmethod
    def choices(cls, services: Services) -> dict[str, list[Any]]:
        return {"source": [*services.item_sets("cogent"), TYPED]}

    def check(self, services: Services) -> None:
        super().check(services)
        if self.source == TYPED:
            try:
                MathItem(id="typed", question=self.question, answer=self.answer)
            except ValueError:
                raise ConfigError("A typed item needs a question and its answer as a number.") from None
        elif self.source not in services.item_sets("cogent"):
            raise ConfigError(f"This server serves no '{self.source}' items; choose one of: "
                              f"{', '.join([*services.item_sets('cogent'), TYPED])}.")

    def run_config(self) -> dict[str, Any]:
        return {"task": self.task, "models": sorted({a.model for a in self.agents}), "settings": self.rules()}

    @property
    def task(self) -> str:
        return "gsm8k" if self.source == TYPED else self.source

    def rules(self) -> dict[str, Any]:
        return CogentSettings(variant=self.variant, task=self.task, rounds=self.rounds, passes=self.passes,
                              coin_rounds=self.coin_rounds, temperature=self.temperature,
                              max_tokens=self.max_tokens).model_dump()


class CogentRoom(TurnsRoom):
    protocol = "cogent"
    scripts = (TURNS_SCRIPT,)
    settings_model = CogentRoomSettings

    @property
    def cogent(self) -> CogentRoomSettings:
        assert isinstance(self.room.settings, CogentRoomSettings)
        return self.room.settings

    def protocol_instance(self) -> Protocol[Any, Any, Any]:
        return CogentStudy()

    def next_item(self) -> dict[str, Any]:
        s = self.cogent
        if s.source == TYPED:
            return MathItem(id=f"typed-{self.state.cursor + 1}", question=s.question, answer=s.answer).model_dump()
        items = self.room.services.items_of("cogent", s.source)
        order = random.Random(s.seed).sample(range(len(items)), len(items))
        item: dict[str, Any] = items[order[self.state.cursor % len(items)]]
        return item

    def seats(self, people: list[str], agents: list[AgentSpec]) -> list[AgentSpec]:
        want = {"B": 1, "A": 1, "A and B": 2}[self.cogent.people_sit]
        if len(people) < want:
            raise AdapterError("too_few", f"Seats {self.cogent.people_sit} are for people: {want} must be here.")
        humans = [AgentSpec(name=p, kind="human") for p in people[:want]]
        if len(humans) + len(agents) < 2:
            raise AdapterError("too_few", "COGENT needs two seats: add an agent to the room.")
        if self.cogent.people_sit == "B":
            return [agents[0], humans[0]]
        if self.cogent.people_sit == "A":
            return [humans[0], agents[0]]
        return humans

    def game_settings(self) -> dict[str, Any]:
        return self.cogent.rules()

    def item_view(self, item: dict[str, Any]) -> dict[str, Any]:
        task = BENCHMARKS[self.cogent.task]
        return {"task": task.render(item)}

    def outcome_text(self, item: dict[str, Any], outcome: dict[str, Any]) -> str:
        right = "right" if outcome.get("correct") else "wrong"
        return (f"final answer {outcome.get('answer') or '(none)'} ({right}; the answer is {item.get('answer')}), "
                f"{outcome.get('terms_accepted', 0)} term(s) accepted, {outcome.get('terms_rejected', 0)} rejected")
