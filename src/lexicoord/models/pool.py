"""The Models of one run, each made once and shared by every agent that names it.

A pool is explicit and short-lived (one per run), not a hidden global: two
runs, or two tests, never share a stateful model by accident.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lexicoord.models.budget import Budget
from lexicoord.models.cache import Cache
from lexicoord.models.model import Model
from lexicoord.models.registry import cache_enabled_by_env, get_model

#: Gives the budget a model draws on, by its spec (``None``: no limit for that model).
BudgetFor = Callable[[str], "Budget | None"]


class ModelPool:
    def __init__(self, *, cache: bool | Cache | None = None, **options: Any) -> None:
        self._cache = cache
        self._options = options
        self._models: dict[str, Model] = {}
        self._budget_for: BudgetFor | None = None

    def get(self, spec: str) -> Model:
        if spec not in self._models:
            model = self._models[spec] = get_model(spec, cache=self._cache, **self._options)
            if self._budget_for is not None:
                model.budget = self._budget_for(spec)
        return self._models[spec]

    def add(self, model: Model, spec: str | None = None) -> None:
        """Use ``model`` (for example a scripted one built in a test) wherever ``spec`` is named."""
        self._models[spec or model.spec] = model

    @property
    def specs(self) -> list[str]:
        """The models made or added so far, by the spec they were asked for."""
        return list(self._models)

    @property
    def caching(self) -> bool:
        """Whether the pool's models keep replies (the run's setting, else ``LEXICOORD_CACHE``)."""
        return cache_enabled_by_env() if self._cache is None else self._cache is not False

    def share_cache(self, cache: Cache) -> None:
        """Keep replies in ``cache`` from now on (a run's store, read by every machine of the run), for the models
        made so far and those to come; a pool that keeps none stays so."""
        if not self.caching:
            return
        self._cache = cache
        for model in self._models.values():
            if model.cache is not None:
                model.cache = cache

    def draw_on(self, budget_for: BudgetFor) -> None:
        """Every model, made or to come, draws its calls on ``budget_for(spec)`` (a run's rate budget)."""
        self._budget_for = budget_for
        for spec, model in self._models.items():
            model.budget = budget_for(spec)

    async def aclose(self) -> None:
        await asyncio.gather(*(m.provider.aclose() for m in self._models.values()), return_exceptions=True)
