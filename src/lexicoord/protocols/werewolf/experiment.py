"""Werewolf as an experiment file: the villagers' and the wolves' models, how many games at how many players,
the rule flags, and the conditions (ORIGIN without term pools, COGENT with them, on the same deals).
``lexicoord werewolf run`` writes exactly this file from its flags.

    protocol = "werewolf"
    [models]
    villagers = "openai/gpt-4o-mini"   # every seat's model
    wolves = "openai/gpt-4o"           # the wolves' seats (default: the villagers')
    [data]
    games = 10                         # per condition, paired by seed
    players = 8
    [settings]                         # rule flags (lexicoord werewolf run --help lists them)
    max_days = 5
    exile_tie = "nobody"
    [grid]
    conditions = ["origin", "cogent"]
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.experiments.experiment import Call, Campaign, Experiment, ModelName, Plan, Strict, placed_elsewhere
from lexicoord.protocols.werewolf.rules import WerewolfSettings, check_table
from lexicoord.protocols.werewolf.state import DEALS, game_item
from lexicoord.runs.grid import grid

Condition = Literal["origin", "cogent"]
CONDITIONS: tuple[Condition, ...] = ("origin", "cogent")

#: Tokens of a Werewolf prompt before the game's history (the rules, the player's role and what it knows).
PROMPT_OVERHEAD = 400
#: Tokens of a night action or a vote: a name.
ACTION_TOKENS = 24


class Models(Strict):
    #: Every seat's model (the villagers').
    villagers: ModelName = "local/smollm2-135m"
    #: The wolves' seats' model (two line-ups, as in Werewolf Arena); the villagers' when not given.
    wolves: ModelName | None = None


class Data(Strict):
    #: Games per condition; each has its own deal and seed, the same under every condition.
    games: int = Field(default=1, ge=1)
    players: int = Field(default=8, ge=4, le=20)


class Settings(WerewolfSettings, Strict):
    @model_validator(mode="before")
    @classmethod
    def _not_here(cls, values: Any) -> Any:
        return placed_elsewhere(values, {"condition": "grid.conditions", "wolf_model": "models.wolves"})


class Grid(Strict):
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS), min_length=1)


class Parts(Strict):
    models: Models = Field(default_factory=Models)
    data: Data = Field(default_factory=Data)
    settings: Settings = Field(default_factory=Settings)
    grid: Grid = Field(default_factory=Grid)


def players(count: int) -> list[str]:
    return [f"Player {i}" for i in range(1, count + 1)]


def game_items(games: int, seed: int) -> list[dict[str, Any]]:
    """One item per game with its own seed: a pair of conditions plays the same deal."""
    return [game_item(seed, i) for i in range(games)]


class WerewolfPlan(Plan[Parts]):
    parts = Parts
    prefix = "werewolf"
    grows = ("games", "conditions")
    report_command = "lexicoord werewolf report"

    def campaign(self, experiment: Experiment, parts: Parts) -> Campaign:
        base = WerewolfSettings.model_validate({**parts.settings.model_dump(exclude={"wolf_model"}),
                                                "wolf_model": parts.models.wolves})
        check_table(base, players(parts.data.players))
        lineup = [AgentSpec(name=p, model=parts.models.villagers) for p in players(parts.data.players)]
        conditions: list[str] = list(dict.fromkeys(parts.grid.conditions))
        episodes: list[EpisodeSpec] = []
        for c in conditions:
            episodes += grid(game_items(parts.data.games, experiment.seed), [lineup],
                             settings=[base.model_copy(update={"condition": c}).model_dump()])
        config = {"model": parts.models.villagers, "wolves_model": parts.models.wolves, "games": parts.data.games,
                  "conditions": conditions, "players": parts.data.players,
                  "rules": base.model_dump(exclude={"condition"}), "deals": DEALS}
        return Campaign(episodes=episodes, config=config)

    def calls(self, parts: Parts, episode: EpisodeSpec) -> list[Call]:
        """Every day played, no one dying: each night the wolves talk and pick, the seer, witch and guard act;
        each day every player speaks (discussion rounds and last words) and votes. Prompts carry the rules and
        up to ``history_speeches`` earlier turns."""
        s = WerewolfSettings.model_validate(episode.settings)
        n = len(episode.lineup)
        history = s.history_speeches * s.max_tokens // 2
        prompt = PROMPT_OVERHEAD + history
        speeches = s.max_days * (n * s.discussion_rounds + s.wolves * s.wolf_turns + (s.last_words != "none"))
        actions = s.max_days * (n + s.wolves + s.seers + s.witches + s.guards)
        wolves = s.wolf_model or parts.models.villagers
        share = s.wolves / n
        out = []
        for model, part in ((parts.models.villagers, 1 - share), (wolves, share)):
            calls_ = round((speeches + actions) * part)
            out.append(Call(model=model, calls=calls_, prompt_tokens=calls_ * prompt,
                            completion_tokens=round((speeches * s.max_tokens + actions * ACTION_TOKENS) * part)))
        return out


PLAN = WerewolfPlan()
