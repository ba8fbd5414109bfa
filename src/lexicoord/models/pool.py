"""The Models of one run, each made once and shared by every agent that names it.

A pool is explicit and short-lived (one per run), not a hidden global: two
runs, or two tests, never share a stateful model by accident.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lexicoord.models.cache import ResponseCache
from lexicoord.models.model import Model
from lexicoord.models.registry import get_model


class ModelPool:
    def __init__(self, *, cache: bool | ResponseCache | None = None, **options: Any) -> None:
        self._cache = cache
        self._options = options
        self._models: dict[str, Model] = {}

    def get(self, spec: str) -> Model:
        if spec not in self._models:
            self._models[spec] = get_model(spec, cache=self._cache, **self._options)
        return self._models[spec]

    def add(self, model: Model, spec: str | None = None) -> None:
        """Use ``model`` (for example a scripted one built in a test) wherever ``spec`` is named."""
        self._models[spec or model.spec] = model

    async def aclose(self) -> None:
        await asyncio.gather(*(m.provider.aclose() for m in self._models.values()), return_exceptions=True)
