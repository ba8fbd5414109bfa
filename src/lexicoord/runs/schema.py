"""ORM classes over the store's tables (:mod:`lexicoord.runs.tables`), for the concerns that work with objects.

The tables are defined once, in Core, there; each class here maps one of them and only names its columns' Python
types for the type checker (a test keeps the names and their nullability equal to the table's). A command that
reads a few rows with Core statements therefore never imports the ORM.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import DeclarativeBase, Mapped

from lexicoord.runs import tables


class Base(DeclarativeBase):
    metadata = tables.METADATA


class RunRow(Base):
    __table__ = tables.RUNS
    id: Mapped[str]
    protocol: Mapped[str]
    status: Mapped[str]
    created_at: Mapped[float]
    updated_at: Mapped[float]
    config: Mapped[dict[str, Any]]
    total_episodes: Mapped[int]


class EpisodeRow(Base):
    __table__ = tables.EPISODES
    id: Mapped[int]
    run_id: Mapped[str]
    key: Mapped[str]
    position: Mapped[int]
    item_id: Mapped[str]
    repetition: Mapped[int]
    seed: Mapped[int]
    spec: Mapped[dict[str, Any]]
    status: Mapped[str]
    error: Mapped[str | None]
    outcome: Mapped[dict[str, Any] | None]
    started_at: Mapped[float]
    finished_at: Mapped[float]
    attempt: Mapped[int]
    model_calls: Mapped[int]
    prompt_tokens: Mapped[int]
    completion_tokens: Mapped[int]


class EventRow(Base):
    __table__ = tables.EVENTS
    id: Mapped[int]
    episode_id: Mapped[int]
    seq: Mapped[int]
    type: Mapped[str]
    agent: Mapped[str | None]
    round: Mapped[int | None]
    ts: Mapped[float]
    data: Mapped[dict[str, Any]]


class RoomRow(Base):
    __table__ = tables.ROOMS
    id: Mapped[str]
    code: Mapped[str]
    run_id: Mapped[str]
    status: Mapped[str]
    created_at: Mapped[float]
    updated_at: Mapped[float]
    config: Mapped[dict[str, Any]]
    state: Mapped[dict[str, Any]]


class MoveRow(Base):
    __table__ = tables.MOVES
    id: Mapped[int]
    run_id: Mapped[str]
    key: Mapped[str]
    player: Mapped[str]
    idx: Mapped[int]
    data: Mapped[dict[str, Any]]


class ClaimRow(Base):
    __table__ = tables.CLAIMS
    run_id: Mapped[str]
    key: Mapped[str]
    position: Mapped[int]
    owner: Mapped[str | None]
    expires_at: Mapped[float]


class StudyRow(Base):
    __table__ = tables.STUDIES
    id: Mapped[str]
    created_at: Mapped[float]
    updated_at: Mapped[float]
    config: Mapped[dict[str, Any]]
    state: Mapped[dict[str, Any]]


class ParticipantRow(Base):
    __table__ = tables.PARTICIPANTS
    study_id: Mapped[str]
    pid: Mapped[str]
    stage: Mapped[str]
    outcome: Mapped[str | None]
    updated_at: Mapped[float]
    data: Mapped[dict[str, Any]]


class GateRow(Base):
    __table__ = tables.GATES
    id: Mapped[str]
    run_id: Mapped[str]
    key: Mapped[str | None]
    episode_key: Mapped[str]
    status: Mapped[str]
    token: Mapped[str]
    created_at: Mapped[float]
    updated_at: Mapped[float]
    expires_at: Mapped[float | None]
    owner: Mapped[str | None]
    lease_until: Mapped[float | None]
    request: Mapped[dict[str, Any]]
    verdict: Mapped[dict[str, Any]]


class ResponseRow(Base):
    __table__ = tables.RESPONSES
    key: Mapped[str]
    model: Mapped[str]
    created_at: Mapped[float]
    output: Mapped[str]


class RateBucketRow(Base):
    __table__ = tables.RATE_BUCKETS
    run_id: Mapped[str]
    model: Mapped[str]
    requests_rate: Mapped[float | None]
    requests_cap: Mapped[float]
    requests: Mapped[float]
    tokens_rate: Mapped[float | None]
    tokens_cap: Mapped[float]
    tokens: Mapped[float]
    at: Mapped[float]
    spent_requests: Mapped[int]
    spent_tokens: Mapped[int]
