"""Fills a line-up's seats: models from the run's pool, people from the seats a front end holds.

A protocol may add kinds of its own (``simulated`` ...) through its
``seat_kinds``; everything else is the platform's, so every protocol can seat
a model or a person without knowing which it got.
"""

from __future__ import annotations

from collections.abc import Mapping

from lexicoord.core.context import EpisodeContext, SeatMaker
from lexicoord.core.seat import Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.models.pool import ModelPool
from lexicoord.models.types import GenerateConfig
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.llm import LLMSeat


class SeatFactory:
    def __init__(
        self,
        models: ModelPool,
        *,
        people: dict[str, HumanSeat] | None = None,
        own_kinds: Mapping[str, SeatMaker] | None = None,
        person_timeout: float | None = 300.0,
    ) -> None:
        self.models = models
        #: Seats for people, by seat name; a front end binds each to a person. Missing ones are made on demand.
        self.people = people if people is not None else {}
        self.own_kinds = dict(own_kinds or {})
        self.person_timeout = person_timeout

    def llm(self, spec: AgentSpec, ctx: EpisodeContext, system_prompt: str | None = None) -> LLMSeat:
        """A model seat; its calls are seeded from the episode's seed unless the seat sets its own."""
        if not spec.model:
            raise ConfigError(f"Seat '{spec.name}' is a model seat but names no model.")
        options = {k: v for k, v in spec.options.items() if k in GenerateConfig.model_fields}
        if options.get("seed") is None:
            options["seed"] = ctx.rng.randrange(2**31)
        config = GenerateConfig(**options)
        return LLMSeat(spec.name, self.models.get(spec.model), system_prompt=system_prompt, config=config,
                       role=spec.role)

    def __call__(self, spec: AgentSpec, ctx: EpisodeContext, system_prompt: str | None) -> Seat:
        if spec.kind in self.own_kinds:
            return self.own_kinds[spec.kind](spec, ctx, system_prompt)
        if spec.kind == "llm":
            return self.llm(spec, ctx, system_prompt)
        if spec.kind == "human":
            seat = self.people.get(spec.name)
            if seat is None:
                # A protocol's ``seat_timeout`` setting bounds a person's move wherever the seat was not made ahead.
                timeout = float(ctx.settings.get("seat_timeout", self.person_timeout or 0)) or None
                seat = self.people[spec.name] = HumanSeat(spec.name, timeout=timeout, role=spec.role)
            return seat
        raise ConfigError(f"No seat of kind '{spec.kind}' can be filled here (seat '{spec.name}'); "
                          f"known: {', '.join(['llm', 'human', *self.own_kinds])}.")
