"""What the store hands out and takes in: versioned pydantic records, never ORM rows."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class RunInfo(BaseModel):
    version: int = 1
    id: str
    protocol: str
    status: str
    created_at: float
    updated_at: float
    config: dict[str, Any] = Field(default_factory=dict)
    total_episodes: int = 0
    done: int = 0
    failed: int = 0
    #: Second saves of finished episodes with other content, kept beside the first (status ``conflict``).
    conflicts: int = 0


class EpisodeRecord(BaseModel):
    """A finished episode (done or failed), as written in one transaction with its events."""

    version: int = 1
    id: int | None = None
    run_id: str
    key: str
    position: int = 0
    item_id: str
    repetition: int = 0
    seed: int = 0
    spec: dict[str, Any] = Field(default_factory=dict)
    status: str
    error: str | None = None
    outcome: dict[str, Any] | None = None
    started_at: float
    finished_at: float
    attempt: int = 1
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def duration(self) -> float:
        return self.finished_at - self.started_at
