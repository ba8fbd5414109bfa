"""The ambiguity debate as an experiment file: the debaters (each leads one debate per instruction and answers
alone in the single-agent baseline), an optional judge, the instructions, the reply settings and the
conditions. ``lexicoord debate run`` writes exactly this file from its flags.

    protocol = "debate"
    [models]
    debaters = ["openai/gpt-4o", "groq/llama-3.1-8b-instant"]
    judge = "openai/gpt-4o-mini"   # optional second opinion
    [data]
    per_category = 20               # generated pairs per ambiguity type (or dataset = "FILE.jsonl")
    [settings]
    rounds = 5
    followers = 2
    [grid]
    conditions = ["single", "debate"]
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.experiments.estimate import tokens_of
from lexicoord.experiments.experiment import Call, Campaign, DataPath, Experiment, ModelName, Plan, Strict
from lexicoord.protocols.debate.common import DebateSettings
from lexicoord.protocols.debate.rules import rotations
from lexicoord.runs.grid import grid
from lexicoord.tasks.base import stratified
from lexicoord.tasks.instructions import Instruction, RobotInstructions, generated_instructions

Condition = Literal["single", "debate"]
CONDITIONS: tuple[Condition, ...] = ("single", "debate")

#: Tokens of a debate prompt beyond the scene and the instruction (the role, the rules, the answer's form).
PROMPT_OVERHEAD = 300
#: A judge's answer: yes or no.
JUDGE_TOKENS = 4


def seats_from(models: list[str]) -> list[AgentSpec]:
    """One seat per distinct model, named after it."""
    if len(set(models)) != len(models):
        raise ConfigError("A model is named twice with --model.")
    seats, used = [], set()
    for spec in models:
        if "/" not in spec:
            raise ConfigError(f"--model '{spec}' is not of the form provider/model.")
        base = spec.split("/", 1)[1].rsplit("/", 1)[-1].removesuffix(".gguf") or "agent"
        name, k = base, 2
        while name in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name)
        seats.append(AgentSpec(name=name, model=spec))
    return seats


def instructions_from(dataset: str | None, per_category: int, seed: int, twins: bool, items: int | None) -> list[Instruction]:
    """A JSONL file (or ``hf:NAME``) of pairs and single instructions, or generated pairs."""
    task = RobotInstructions(unambiguous=twins)
    chosen = task.load(dataset) if dataset else generated_instructions(per_category, seed, unambiguous=twins)
    if items:
        chosen = stratified(chosen, items, lambda i: i.type)
    if not chosen:
        raise ConfigError("No instructions to run.")
    return chosen


def study_grid(instructions: list[Instruction], seats: list[AgentSpec], conditions: list[str],
               settings: DebateSettings, followers: int) -> list[EpisodeSpec]:
    """Single-agent episodes (one per model) and debates (one per leader) for every instruction."""
    tasks = [i.as_task() for i in instructions]
    base = settings.model_dump(exclude={"condition"}, exclude_none=True)
    episodes: list[EpisodeSpec] = []
    if "single" in conditions:
        episodes += grid(tasks, [[s.model_copy(update={"role": "single"})] for s in seats],
                         settings=[{**base, "condition": "single"}])
    if "debate" in conditions:
        episodes += grid(tasks, rotations(seats, followers), settings=[{**base, "condition": "debate"}])
    return episodes


class Models(Strict):
    #: One seat per model, named after it; each leads once in the debates.
    debaters: list[ModelName] = Field(default_factory=lambda: ["local/smollm2-135m"], min_length=1)
    #: An LLM judge as a second opinion on ambiguous instructions.
    judge: ModelName | None = None

    @field_validator("debaters")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a model is named twice")
        return value


class Data(Strict):
    #: A JSONL file of pairs (``debate generate``) or single instructions, or ``hf:NAME``; none: generated pairs.
    dataset: DataPath | None = None
    #: Generated pairs per ambiguity type when no dataset is given (the paper: 20).
    per_category: int = Field(default=20, ge=1)
    #: N instructions, taken in turn from each type.
    items: int | None = Field(default=None, ge=1)
    #: Also run the unambiguous twins (false alarms).
    twins: bool = True


class Settings(DebateSettings, Strict):
    #: Followers per debate.
    followers: int = Field(default=2, ge=1, le=8)


class Grid(Strict):
    conditions: list[Condition] = Field(default_factory=lambda: list(CONDITIONS), min_length=1)


class Parts(Strict):
    models: Models = Field(default_factory=Models)
    data: Data = Field(default_factory=Data)
    settings: Settings = Field(default_factory=Settings)
    grid: Grid = Field(default_factory=Grid)


class DebatePlan(Plan[Parts]):
    parts = Parts
    prefix = "debate"
    grows = ("instructions", "conditions")

    def campaign(self, experiment: Experiment, parts: Parts) -> Campaign:
        d, s = parts.data, parts.settings
        seats = seats_from(parts.models.debaters)
        settings = DebateSettings.model_validate({**s.model_dump(exclude={"followers"}), "judge": parts.models.judge})
        chosen = instructions_from(d.dataset, d.per_category, experiment.seed, d.twins, d.items)
        conditions: list[str] = list(dict.fromkeys(parts.grid.conditions))
        episodes = study_grid(chosen, seats, conditions, settings, s.followers)
        config = {"dataset": str(d.dataset) if d.dataset else f"generated:{d.per_category}/type seed {experiment.seed}",
                  "instructions": len(chosen), "models": [seat.model for seat in seats], "conditions": conditions,
                  "followers": s.followers, "settings": settings.model_dump(exclude={"condition"})}
        return Campaign(episodes=episodes, config=config, also_models=[parts.models.judge] if parts.models.judge else [])

    def calls(self, parts: Parts, episode: EpisodeSpec) -> list[Call]:
        """A single agent answers once; a debate runs every round: the leader proposes, each follower reviews.
        Every reply is remembered in its seat's conversation, so each round's prompt carries the earlier ones."""
        s = parts.settings
        item = episode.item
        words = tokens_of(f"{item.get('scene', '')} {item.get('instruction', '')}")
        single = episode.settings.get("condition") == "single"
        rounds = 1 if single else s.rounds
        out = []
        for seat in episode.lineup:
            if not seat.model:
                continue
            # Round r's prompt holds the r - 1 earlier replies and feedback of this seat's conversation.
            prompt = sum(PROMPT_OVERHEAD + words + r * s.max_tokens for r in range(rounds))
            out.append(Call(model=seat.model, calls=rounds, prompt_tokens=prompt, completion_tokens=rounds * s.max_tokens))
        if parts.models.judge:
            out.append(Call(model=parts.models.judge, calls=1, prompt_tokens=PROMPT_OVERHEAD + words,
                            completion_tokens=JUDGE_TOKENS))
        return out


PLAN = DebatePlan()
