"""What one episode is: a task item, protocol settings, a line-up of seats, a repetition.

Each episode has a stable key computed from its content, so re-running the
same grid finds the episodes already done whatever order they are listed in,
and a seed derived from the key and the run's base seed, so a resumed episode
samples exactly as the first try would have (and hits the response cache).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field


class AgentSpec(BaseModel):
    """One seat of a line-up, as written in a config file or on the command line.

    ``kind`` is ``llm`` (needs ``model``), ``human`` (a person at a seat), or a
    protocol's own kind (``simulated`` ...). ``options`` carries per-seat
    settings (temperature, policy, persona ...).
    """

    name: str
    kind: str = "llm"
    model: str | None = None
    role: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


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
