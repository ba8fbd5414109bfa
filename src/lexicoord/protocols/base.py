"""What a protocol is: async rules that drive agents through one episode and emit events.

A protocol owns the rules (turns, convergence, termination) and nothing else:
it neither stores nor prints. It receives an :class:`EpisodeContext` with the
episode's item, settings and line-up, a seeded random generator, the run's
model pool, and ``emit`` for events; it returns the outcome as a dict.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lexicoord.agents.base import Agent, AgentSpec
from lexicoord.agents.llm import LLMAgent
from lexicoord.errors import ConfigError
from lexicoord.models.pool import ModelPool
from lexicoord.models.types import GenerateConfig
from lexicoord.runs.events import Event
from lexicoord.runs.grid import EpisodeSpec
from lexicoord.runs.recorder import Recorder


@dataclass
class EpisodeContext:
    spec: EpisodeSpec
    seed: int
    models: ModelPool
    recorder: Recorder = field(default_factory=Recorder)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    @property
    def item(self) -> dict[str, Any]:
        return self.spec.item

    @property
    def settings(self) -> dict[str, Any]:
        return self.spec.settings

    def emit(self, event: Event) -> Event:
        return self.recorder.emit(event)

    def llm_agent(self, spec: AgentSpec, system_prompt: str | None = None) -> LLMAgent:
        """An LLM agent for a line-up seat; its calls are seeded from the episode's seed."""
        if not spec.model:
            raise ConfigError(f"Agent '{spec.name}' is an LLM agent but names no model.")
        known = set(GenerateConfig.model_fields)
        config = GenerateConfig(**{k: v for k, v in spec.options.items() if k in known})
        if config.seed is None:
            config = config.merged(seed=self.rng.randrange(2**31))
        return LLMAgent(spec.name, self.models.get(spec.model), system_prompt=system_prompt, config=config, role=spec.role)


class Protocol(ABC):
    """Subclasses set ``name`` and implement :meth:`play`."""

    name: ClassVar[str]

    def build_agent(self, spec: AgentSpec, ctx: EpisodeContext) -> Agent:
        """Agents of the kinds this protocol supports; the base knows LLM agents."""
        if spec.kind == "llm":
            return ctx.llm_agent(spec)
        raise ConfigError(f"Protocol '{self.name}' has no agents of kind '{spec.kind}' (seat '{spec.name}').")

    @abstractmethod
    async def play(self, ctx: EpisodeContext) -> dict[str, Any]:
        """Run one episode; return its outcome. Raising marks the episode failed."""
