"""What one episode is: a task item, protocol settings, a line-up of seats, a repetition.

Each episode has a stable key computed from its content, so re-running the
same grid finds the episodes already done whatever order they are listed in,
and a seed derived from the key and the run's base seed, so a resumed episode
samples exactly as the first try would have (and hits the response cache).

A game played live also has a :class:`Place`: the room, the study's group and the game's number. It is part
of the key, so two rooms or two groups that play the same item with the same seats are two episodes of a run,
never one. A campaign's episode has no place, and its key is what it always was.
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


class Place(BaseModel):
    """Where a live game was played, and under which of a study's conditions: its identity beyond its content."""

    #: The room's id (unique on a server and in its store).
    room: str
    #: The game's number in that room, from 1.
    game: int
    #: A study's group (``g1`` ...), if the room is a group's.
    group: str | None = None
    #: The study's condition the group was assigned, if the study has conditions.
    condition: str | None = None


class EpisodeSpec(BaseModel):
    item_id: str
    item: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    lineup: list[AgentSpec] = Field(default_factory=list)
    repetition: int = 0
    place: Place | None = None

    @property
    def key(self) -> str:
        data = self.model_dump(mode="json", exclude={"place"} if self.place is None else None)
        if self.place is not None:  # a place's unset fields are left out, so adding one later keeps old keys
            data["place"] = self.place.model_dump(mode="json", exclude_none=True)
        blob = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def seed(self, base_seed: int = 0) -> int:
        return episode_seed(self.key, base_seed)


def episode_seed(key: str, base_seed: int = 0) -> int:
    """The seed of the episode whose key is ``key`` in a run seeded ``base_seed`` (what :meth:`EpisodeSpec.seed`
    gives, for a caller that already holds the key: a key hashes the whole spec)."""
    return int(hashlib.sha256(f"{base_seed}:{key}".encode()).hexdigest()[:8], 16) & 0x7FFFFFFF
