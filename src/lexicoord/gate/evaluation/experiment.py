"""The gate on a benchmark as an experiment file: the policies are its grid, a simulated person answers.

    protocol = "gate"
    [models]
    seats = ["local/smollm2-135m"]     # the models every policy's seats are filled from, in turn
    judge = "openai/gpt-4o-mini"       # optional: judges whether each question is about the ambiguous element
    [data]
    dataset = "knowno:../shared/data/knowno/mobile_manipulation.txt"   # or ambik:AmbiK_data.csv
    items = 60                         # N items, taken in turn from each category
    [settings]                         # the gate's bounds (lexicoord.gate.settings), the same for every policy
    clarifications = 1
    qhat = 0.93                        # conformal: lexicoord gate calibrate knowno:CALIBRATION --model ...
    calibrated_model = "local/smollm2-135m"
    [grid]
    policies = ["single", "debate", "coalition", "conformal"]

``lexicoord gate eval`` writes exactly this file from its flags. Every check is an episode of the ``gate``
protocol whose item carries the benchmark's gold fields; the person's seat is the simulated one
(:mod:`lexicoord.gate.evaluation.person`), so the record never passes it off as a person's.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError, model_validator

from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.experiments.estimate import tokens_of
from lexicoord.experiments.experiment import (
    Call,
    Campaign,
    DataPath,
    Experiment,
    ModelName,
    Plan,
    Strict,
    placed_elsewhere,
)
from lexicoord.gate.evaluation.person import person_spec
from lexicoord.gate.policies import lineup
from lexicoord.gate.settings import DEFAULT_MODEL, GateSettings
from lexicoord.gate.verdict import Policy
from lexicoord.runs.grid import grid
from lexicoord.tasks.asking import Skips, load_asking
from lexicoord.tasks.base import stratified

#: Tokens of a gate prompt beyond the scene and the instruction (the role, the rules, the answer's form).
PROMPT_OVERHEAD = 300
REPLY_TOKENS = 200


class Models(Strict):
    seats: list[ModelName] = Field(default_factory=lambda: [DEFAULT_MODEL], min_length=1)
    judge: ModelName | None = None


class Data(Strict):
    #: ``knowno:PATH`` or ``ambik:PATH`` (``ambik-indirect:PATH`` for the indirect twins).
    dataset: DataPath
    #: N items, taken in turn from each category (all when unset).
    items: int | None = Field(default=None, ge=1)
    #: A calibration source: its tasks (same scene and instruction) are left out and counted, so that a threshold
    #: is never tested on the tasks it was calibrated on.
    exclude: DataPath | None = None


class Settings(GateSettings):
    """The gate's settings (:class:`GateSettings`); the policy is the grid's and the models the models section's."""

    @model_validator(mode="before")
    @classmethod
    def _placed(cls, values: Any) -> Any:
        return placed_elsewhere(values, {"policy": "grid.policies", "models": "models.seats"})


class Grid(Strict):
    policies: list[Policy] = Field(default_factory=lambda: list[Policy](["single", "debate"]), min_length=1)


class Parts(Strict):
    models: Models = Field(default_factory=Models)
    data: Data
    settings: Settings = Field(default_factory=Settings)
    grid: Grid = Field(default_factory=Grid)


def settings_for(policy: str, parts: Parts) -> GateSettings:
    if parts.settings.clarifications < 1:
        raise ConfigError("settings.clarifications: an evaluation asks at least once (the simulated person answers).")
    values = {**parts.settings.model_dump(exclude={"policy", "models"}), "policy": policy,
              "models": list(parts.models.seats)}
    try:
        return GateSettings.model_validate(values).check()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"settings for the {policy} policy: {problems}.") from None


def lineup_for(settings: GateSettings, judge: str | None) -> list[AgentSpec]:
    seats = lineup(settings, person=person_spec())
    if judge:
        seats.append(AgentSpec(name="judge", model=judge, role="judge"))
    return seats


class GatePlan(Plan[Parts]):
    parts = Parts
    prefix = "gate-eval"
    grows = ("items", "policies")
    report_command = "lexicoord report"

    def campaign(self, experiment: Experiment, parts: Parts) -> Campaign:
        loaded = load_asking(parts.data.dataset)
        skipped = Skips(loaded.skipped)
        pool = loaded.items
        if parts.data.exclude:
            seen = {(i.context, i.instruction) for i in load_asking(parts.data.exclude).items}
            pool = [i for i in loaded.items if (i.context, i.instruction) not in seen]
            if len(pool) < len(loaded.items):
                skipped[f"tasks also in {parts.data.exclude.rpartition('/')[2]}"] += len(loaded.items) - len(pool)
        chosen = stratified(pool, parts.data.items, lambda i: i.category)
        if not chosen:
            raise ConfigError(f"{parts.data.dataset} gives no items.")
        items = [i.gate_item() for i in chosen]
        episodes: list[EpisodeSpec] = []
        policies = list(dict.fromkeys(parts.grid.policies))
        for policy in policies:
            settings = settings_for(policy, parts)
            episodes += grid(items, [lineup_for(settings, parts.models.judge)],
                             settings=[settings.model_dump(mode="json")])
        config = {"dataset": parts.data.dataset, "exclude": parts.data.exclude, "items": len(chosen), "skipped": skipped.line(),
                  "policies": policies, "models": list(parts.models.seats), "judge": parts.models.judge,
                  "settings": parts.settings.model_dump(exclude={"policy", "models"}, exclude_none=True)}
        return Campaign(episodes=episodes, config=config,
                        also_models=[parts.models.judge] if parts.models.judge else [])

    def calls(self, parts: Parts, episode: EpisodeSpec) -> list[Call]:
        """At most every pass a policy may make: one per clarification allowed, plus the first."""
        s = GateSettings.model_validate(episode.settings)
        words = tokens_of(f"{episode.item.get('context', '')} {episode.item.get('instruction', '')} "
                          f"{' '.join(episode.item.get('candidates') or [])}")
        passes = s.clarifications + 1
        per_seat = {"agent": passes, "leader": passes * s.rounds, "follower": passes * s.rounds, "player": passes * 4,
                    "writer": 1, "scorer": passes, "judge": s.clarifications}
        out = []
        for seat in episode.lineup:
            if seat.model and seat.role in per_seat:
                n = per_seat[seat.role or ""]
                out.append(Call(model=seat.model, calls=n, prompt_tokens=n * (PROMPT_OVERHEAD + words),
                                completion_tokens=n * REPLY_TOKENS))
        return out


PLAN = GatePlan()

__all__ = ["PLAN", "GatePlan"]
