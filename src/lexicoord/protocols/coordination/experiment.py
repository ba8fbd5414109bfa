"""The coordination game as an experiment file: seats by name (the first leads), the ambiguity items, the
game's settings and repetitions. ``lexicoord coordination run`` writes exactly this file from its flags.

    protocol = "coordination"
    [models]                      # seat = provider/model, or sim:POLICY[:p] for a simulated person
    leader = "local/smollm2-135m"
    p1 = "sim:noisy:0.2"
    [data]
    dataset = "builtin"           # builtin, a JSONL file, coarsewsd:FOLDER, wictsv:FOLDER or hf:NAME
    items = 20
    [settings]
    clarification_bound = 3
    temperature = 0.7             # every LLM seat's
    [grid]
    repetitions = 1
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.experiments.estimate import tokens_of
from lexicoord.experiments.experiment import Call, Campaign, DataPath, Experiment, Plan, Strict, known_model
from lexicoord.protocols.coordination.lineup import dataset_from, lineup_from, parse_agent
from lexicoord.protocols.coordination.moves import CHOICE_TOKENS, STATEMENT_TOKENS
from lexicoord.protocols.coordination.rules import CoordinationSettings
from lexicoord.runs.grid import grid
from lexicoord.tasks.ambiguous import TASK

#: Tokens of a coordination prompt beyond the item's own words (the instructions and the answer's schema),
#: read off the embedded model's prompts; the history of a game adds each earlier clarification.
PROMPT_OVERHEAD = 260


class Data(Strict):
    dataset: DataPath = "builtin"
    #: The first N items (after the shuffle, when ``sample`` is given).
    items: int | None = Field(default=None, ge=1)
    #: Shuffle the items with this seed first.
    sample: int | None = None
    #: Only items of this category (homonym, polysemy, domain, wsd).
    category: str | None = None


class Settings(CoordinationSettings, Strict):
    #: Every LLM seat's temperature (a seat's option, not a rule of the game).
    temperature: float | None = Field(default=0.7, ge=0, le=2)


class Grid(Strict):
    #: Games per item and line-up; each repetition draws its own seed from the run's seed and the episode.
    repetitions: int = Field(default=1, ge=1)


def _seat(text: str) -> str:
    """A seat as written after its name, checked: a known provider's model or a simulated policy, never a person."""
    try:
        seat = parse_agent(text, 0)
    except ConfigError as exc:
        raise ValueError(str(exc).rstrip(".")) from None
    if seat.kind == "human":
        raise ValueError("campaigns have no people at the keyboard: use sim:POLICY seats, or "
                         "'lexicoord coordination play'")
    if seat.model:
        known_model(seat.model)
    return text


class Parts(Strict):
    #: Seats in order, the first leads: ``provider/model`` or ``sim:POLICY[:p]``.
    models: dict[str, Annotated[str, AfterValidator(_seat)]] = Field(
        default_factory=lambda: {f"a{i}": "local/smollm2-135m" for i in (1, 2, 3)})
    data: Data = Field(default_factory=Data)
    settings: Settings = Field(default_factory=Settings)
    grid: Grid = Field(default_factory=Grid)

    @field_validator("models")
    @classmethod
    def _seats(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) < 2:
            raise ValueError("the game needs at least two seats")
        return value

    def lineup(self) -> list[AgentSpec]:
        return lineup_from([f"{name}={spec}" for name, spec in self.models.items()], "", 0, self.settings.temperature)


def game_settings(settings: Settings) -> dict[str, Any]:
    """The rules stored with each episode: the bound and whether the leader clarifies always, any other rule only
    when it differs from its default, so the episodes of runs made before a rule existed keep their keys."""
    rules = settings.model_dump(include=set(CoordinationSettings.model_fields))
    defaults = CoordinationSettings().model_dump()
    always = {"clarification_bound", "leader_clarifies"}
    return {k: v for k, v in rules.items() if k in always or v != defaults[k]}


class CoordinationPlan(Plan[Parts]):
    parts = Parts
    prefix = "coord"
    grows = ("items", "repetitions")

    def campaign(self, experiment: Experiment, parts: Parts) -> Campaign:
        s = parts.settings
        if s.leader_may_end and not s.leader_clarifies:
            raise ConfigError("settings.leader_may_end offers the end in the clarification request; it needs "
                              "settings.leader_clarifies.")
        lineup = parts.lineup()
        chosen = dataset_from(parts.data.dataset, parts.data.items, parts.data.sample, parts.data.category)
        rules = game_settings(s)
        episodes = grid([i.as_task() for i in chosen], [lineup], settings=[rules], repetitions=parts.grid.repetitions)
        config = {"dataset": parts.data.dataset, "items": len(chosen),
                  "lineup": [a.model_dump(exclude_defaults=True) for a in lineup], "settings": rules,
                  "repetitions": parts.grid.repetitions}
        if parts.data.dataset in TASK.skipped:  # a named source that leaves rows out says how many, and why
            config["skipped"] = TASK.skipped[parts.data.dataset]
        return Campaign(episodes=episodes, config=config)

    def calls(self, parts: Parts, episode: EpisodeSpec) -> list[Call]:
        """Every round played to the bound: the leader announces, every LLM seat chooses in each of the bound + 1
        rounds, and the leader clarifies between rounds (when it does)."""
        item = episode.item
        words = tokens_of(" ".join([str(item.get("sentence", "")), *map(str, item.get("options", []))]))
        rounds = parts.settings.clarification_bound + 1
        clarifies = parts.settings.clarification_bound if parts.settings.leader_clarifies else 0
        history = STATEMENT_TOKENS * clarifies // 2  # on average half the clarifications are in a prompt
        prompt = PROMPT_OVERHEAD + words + history
        out = []
        for i, seat in enumerate(episode.lineup):
            if seat.kind != "llm" or not seat.model:
                continue
            n = rounds + (1 + clarifies if i == 0 else 0)
            completion = rounds * CHOICE_TOKENS + ((CHOICE_TOKENS + clarifies * STATEMENT_TOKENS) if i == 0 else 0)
            out.append(Call(model=seat.model, calls=n, prompt_tokens=n * prompt, completion_tokens=completion))
        return out


PLAN = CoordinationPlan()

