"""Same word as an experiment file (``lexicoord run FILE``); ``lexicoord same-word run`` writes exactly this file
from its flags.

    protocol = "same-word"
    [models]
    players = ["openai/gpt-4o-mini", "groq/llama-3.1-8b-instant"]   # seats take them in turn
    [data]
    things = "things.jsonl"   # or "builtin"
    items = 10                # the first N things (default: all)
    [settings]
    max_tokens = 20
    [grid]
    seats = [2, 3]            # every thing is played once with each number of seats
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.experiments.estimate import tokens_of
from lexicoord.experiments.experiment import Call, Campaign, DataPath, Experiment, ModelName, Plan, Strict
from lexicoord.runs.grid import grid
from same_word_game.rules import SameWordSettings, prompt_of
from same_word_game.things import TASK

#: The players' model when none is named: lexicoord's embedded model, which needs no key.
DEFAULT_PLAYER = "local/smollm2-135m"


class Models(Strict):
    #: The players' models: seat i plays ``players[i % len(players)]``.
    players: list[ModelName] = Field(default_factory=lambda: [DEFAULT_PLAYER], min_length=1)


class Data(Strict):
    #: ``builtin``, a JSONL file of ``{"id", "thing"}`` (relative to the experiment file) or ``hf:NAME``.
    things: DataPath = "builtin"
    items: int | None = Field(default=None, ge=1)


class Settings(SameWordSettings, Strict):
    pass


class Grid(Strict):
    #: Every thing is played once with each number of seats.
    seats: list[Annotated[int, Field(ge=2, le=8)]] = Field(default_factory=lambda: [2], min_length=1)


class Parts(Strict):
    models: Models = Field(default_factory=Models)
    data: Data = Field(default_factory=Data)
    settings: Settings = Field(default_factory=Settings)
    grid: Grid = Field(default_factory=Grid)


def lineup(players: list[str], seats: int) -> list[AgentSpec]:
    return [AgentSpec(name=f"p{i + 1}", model=players[i % len(players)]) for i in range(seats)]


class SameWordPlan(Plan[Parts]):
    parts = Parts
    prefix = "same-word"
    grows = ("items", "seats")

    def campaign(self, experiment: Experiment, parts: Parts) -> Campaign:
        things = TASK.load(parts.data.things)[:parts.data.items]
        if not things:
            raise ConfigError(f"No things in {parts.data.things}.")
        seats = sorted(set(parts.grid.seats))
        settings = SameWordSettings.model_validate(parts.settings.model_dump())
        episodes = grid([TASK.as_task(t) for t in things], [lineup(parts.models.players, n) for n in seats],
                        settings=[settings.model_dump()])
        config = {"things": parts.data.things, "items": len(things), "models": parts.models.players, "seats": seats,
                  "settings": settings.model_dump()}
        return Campaign(episodes=episodes, config=config)

    def calls(self, parts: Parts, episode: EpisodeSpec) -> list[Call]:
        """Every seat is asked once."""
        prompt = tokens_of(prompt_of(episode.item.get("thing", "")))
        return [Call(model=seat.model, calls=1, prompt_tokens=prompt, completion_tokens=parts.settings.max_tokens)
                for seat in episode.lineup if seat.model]


PLAN = SameWordPlan()
