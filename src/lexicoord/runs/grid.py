"""Episodes of a run: task items x protocol settings x line-ups x repetitions.

Each episode has a stable key computed from its content, so re-running the
same grid finds the episodes already done whatever order they are listed in,
and a seed derived from the key and the run's base seed, so a resumed episode
samples exactly as the first try would have (and hits the response cache).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from lexicoord.agents.base import AgentSpec


class EpisodeSpec(BaseModel):
    item_id: str
    item: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    lineup: list[AgentSpec] = Field(default_factory=list)
    repetition: int = 0

    @property
    def key(self) -> str:
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def seed(self, base_seed: int = 0) -> int:
        return int(hashlib.sha256(f"{base_seed}:{self.key}".encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


def grid(
    items: Iterable[dict[str, Any]],
    lineups: Sequence[Sequence[AgentSpec]],
    settings: Sequence[dict[str, Any]] = ({},),
    repetitions: int = 1,
) -> list[EpisodeSpec]:
    """Every combination, items outermost. Each item needs an ``id``."""
    out = []
    for item in items:
        if "id" not in item:
            raise ValueError(f"task item has no 'id': {str(item)[:120]}")
        for setting in settings:
            for lineup in lineups:
                for rep in range(repetitions):
                    out.append(
                        EpisodeSpec(
                            item_id=str(item["id"]), item=dict(item), settings=dict(setting),
                            lineup=list(lineup), repetition=rep,
                        )
                    )
    return out
