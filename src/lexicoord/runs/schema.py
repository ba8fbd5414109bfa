"""Tables of the store (SQLAlchemy 2). Read and written only through :mod:`lexicoord.runs.store`.

The database itself is created and changed by the migrations in ``migrations/versions``;
a change here needs a new migration there.

One journal (``moves``) keeps the answered requests of every game still in play, a campaign's episode
and a live room's game alike. It is keyed ``(run_id, key, player, idx)``: a room's game is an episode of
the room's run (``rooms.run_id``), stored under its spec's key when it ends, so the key of the episode a
move belongs to is known to both from the start, and the journal is read, settled and cleared per
episode in the same way; the room itself is not a column because the room's run already names it.

An episode's row is normally written once, when it ends (``done`` or ``failed``). A live room's game in
progress also has one, with status ``playing``, holding what a spectator of the room may see of it so far
(see :meth:`lexicoord.runs.store.Store.keep_live`); the same row becomes the ended episode when it is saved.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class RunRow(Base):
    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    protocol: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="running")
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    total_episodes: Mapped[int] = mapped_column(Integer, default=0)


class EpisodeRow(Base):
    __tablename__ = "episodes"
    __table_args__ = (UniqueConstraint("run_id", "key"), Index("ix_episodes_run_position_id", "run_id", "position", "id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(64))
    position: Mapped[int] = mapped_column(Integer, default=0)
    item_id: Mapped[str] = mapped_column(String(256))
    repetition: Mapped[int] = mapped_column(Integer, default=0)
    seed: Mapped[int] = mapped_column(Integer, default=0)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    started_at: Mapped[float] = mapped_column(Float)
    finished_at: Mapped[float] = mapped_column(Float)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    model_calls: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)


class EventRow(Base):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_episode_seq", "episode_id", "seq"),
                      Index("ix_events_episode_type_seq", "episode_id", "type", "seq"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(64), index=True)
    agent: Mapped[str | None] = mapped_column(String(128), nullable=True)
    round: Mapped[int | None] = mapped_column(Integer, nullable=True)
    ts: Mapped[float] = mapped_column(Float)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class RoomRow(Base):
    """A live room: its settings and the state needed to reopen it after a restart."""

    __tablename__ = "rooms"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    code: Mapped[str] = mapped_column(String(32), unique=True)
    run_id: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16), default="open")
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class MoveRow(Base):
    """One answered request of a game still in play (a campaign's episode or a room's game; see above).

    ``player`` is a seat's name, or a room's ``#control`` and ``#left:<seat>`` entries. The unique
    constraint's index also serves reading and clearing one episode's journal (its leading columns).
    """

    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("run_id", "key", "player", "idx"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64))
    player: Mapped[str] = mapped_column(String(128))
    idx: Mapped[int] = mapped_column(Integer)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class ClaimRow(Base):
    """An episode of a run still to be played, and which process holds it until when.

    Several processes on one run share its work through these rows: a process claims a free or
    expired row (skipping rows another process has locked), keeps its claim alive while it plays,
    and the row goes in the transaction that saves the episode. A process killed mid-episode stops
    renewing, so its claim expires and another process plays the episode again.
    """

    __tablename__ = "episode_claims"
    __table_args__ = (Index("ix_episode_claims_run_position", "run_id", "position"),)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    owner: Mapped[str | None] = mapped_column(String(128), nullable=True)
    #: Seconds since the epoch; 0 for a row nobody holds.
    expires_at: Mapped[float] = mapped_column(Float, default=0.0)


class StudyRow(Base):
    """A study being served: its file's values and its own state (open or paused, the lobby, its groups)."""

    __tablename__ = "studies"
    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    state: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ParticipantRow(Base):
    """One participant of a study, by the id their link gave; ``data`` is the whole session (stages, answers,
    group, outcome), ``stage`` and ``outcome`` beside it for counting."""

    __tablename__ = "study_participants"
    study_id: Mapped[str] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True)
    pid: Mapped[str] = mapped_column(String(64), primary_key=True)
    stage: Mapped[str] = mapped_column(String(16))
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)
    updated_at: Mapped[float] = mapped_column(Float)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class GateRow(Base):
    """One check of an agreement gate: its request, its verdict as it stands, and the token of the person's page.

    ``key`` is the caller's idempotency key (unique within a gate configuration's run), so a caller that
    retries or resumes gets this row back instead of a second check. The record of what was said is the
    episode ``(run_id, episode_key)``; this row is what a caller polls."""

    __tablename__ = "gates"
    __table_args__ = (UniqueConstraint("run_id", "key", name="uq_gates_run_key"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(128))
    key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    episode_key: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: The process playing the check, and until when its claim holds (renewed while it plays; on the database's
    #: rows, so two processes sharing a store never both play one check).
    owner: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[float | None] = mapped_column(Float, nullable=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    verdict: Mapped[dict[str, Any]] = mapped_column(JSON)


class ResponseRow(Base):
    """A model's reply, kept by the request's hash (:func:`lexicoord.models.cache.cache_key`): the response cache
    of a store on a server, which every machine of a run reads, so an episode one machine replays reuses the
    replies another kept."""

    __tablename__ = "responses"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[float] = mapped_column(Float)
    output: Mapped[str] = mapped_column(Text)


class RateBucketRow(Base):
    """What is left of one model's rate budget in one run, shared by every process of the run
    (:mod:`lexicoord.runs.rate_budget`). Rates are per second (``NULL``: that dimension has no limit); the levels
    were read at ``at``, by the database's clock; ``spent_*`` count every request and token drawn, so the run's
    rate can be read from them."""

    __tablename__ = "rate_buckets"
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    model: Mapped[str] = mapped_column(String(256), primary_key=True)
    requests_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    requests_cap: Mapped[float] = mapped_column(Float)
    requests: Mapped[float] = mapped_column(Float)
    tokens_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    tokens_cap: Mapped[float] = mapped_column(Float)
    tokens: Mapped[float] = mapped_column(Float)
    at: Mapped[float] = mapped_column(Float)
    spent_requests: Mapped[int] = mapped_column(BigInteger, default=0)
    spent_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
