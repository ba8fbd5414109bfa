"""Tables of the store (SQLAlchemy Core). Read and written only through :mod:`lexicoord.runs.store` and the modules
that keep their own rows there (rooms, studies, gates, the shared cache, the rate budget).

They are plain Core tables, not ORM classes, so that a command that only reads a few rows (``lexicoord runs list``)
never imports SQLAlchemy's ORM, a sixth of its start-up; :mod:`lexicoord.runs.schema` maps its classes onto these
same tables for the concerns that work with objects.

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

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

METADATA = MetaData()

#: The status of a live room's game still being played (an ended episode is ``done`` or ``failed``).
PLAYING = "playing"
#: The status of a second save of a finished episode whose content differs from the first's: kept under its own
#: key (``KEY~2`` ...) beside the first, which stands, and left out of reports (which say how many there are).
CONFLICT = "conflict"


def _required(name: str, *args: Any, **kw: Any) -> Column[Any]:
    """A column that may not be empty: every column is one unless it says ``nullable=True``."""
    return Column(name, *args, nullable=False, **kw)


RUNS = Table(
    "runs", METADATA,
    Column("id", String(128), primary_key=True),
    _required("protocol", String(64)),
    _required("status", String(16), default="running"),
    _required("created_at", Float),
    _required("updated_at", Float),
    _required("config", JSON, default=dict),
    _required("total_episodes", Integer, default=0),
)

EPISODES = Table(
    "episodes", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    _required("run_id", String(128), ForeignKey("runs.id", ondelete="CASCADE"), index=True),
    _required("key", String(64)),
    _required("position", Integer, default=0),
    _required("item_id", String(256)),
    _required("repetition", Integer, default=0),
    _required("seed", Integer, default=0),
    _required("spec", JSON, default=dict),
    _required("status", String(16)),
    Column("error", Text, nullable=True),
    Column("outcome", JSON, nullable=True),
    _required("started_at", Float),
    _required("finished_at", Float),
    _required("attempt", Integer, default=1),
    _required("model_calls", Integer, default=0),
    _required("prompt_tokens", Integer, default=0),
    _required("completion_tokens", Integer, default=0),
    UniqueConstraint("run_id", "key"),
    Index("ix_episodes_run_position_id", "run_id", "position", "id"),
)

EVENTS = Table(
    "events", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    _required("episode_id", Integer, ForeignKey("episodes.id", ondelete="CASCADE")),
    _required("seq", Integer),
    _required("type", String(64), index=True),
    Column("agent", String(128), nullable=True),
    Column("round", Integer, nullable=True),
    _required("ts", Float),
    _required("data", JSON),
    Index("ix_events_episode_seq", "episode_id", "seq"),
    Index("ix_events_episode_type_seq", "episode_id", "type", "seq"),
)

#: A live room: its settings and the state needed to reopen it after a restart.
ROOMS = Table(
    "rooms", METADATA,
    Column("id", String(32), primary_key=True),
    _required("code", String(32), unique=True),
    _required("run_id", String(128)),
    _required("status", String(16), default="open"),
    _required("created_at", Float),
    _required("updated_at", Float),
    _required("config", JSON, default=dict),
    _required("state", JSON, default=dict),
)

#: One answered request of a game still in play (a campaign's episode or a room's game; see above). ``player`` is
#: a seat's name, or a room's ``#control`` and ``#left:<seat>`` entries. The unique constraint's index also serves
#: reading and clearing one episode's journal (its leading columns).
MOVES = Table(
    "moves", METADATA,
    Column("id", Integer, primary_key=True, autoincrement=True),
    _required("run_id", String(128), ForeignKey("runs.id", ondelete="CASCADE")),
    _required("key", String(64)),
    _required("player", String(128)),
    _required("idx", Integer),
    _required("data", JSON),
    UniqueConstraint("run_id", "key", "player", "idx"),
)

#: An episode of a run still to be played, and which process holds it until when. Several processes on one run
#: share its work through these rows: a process claims a free or expired row (skipping rows another process has
#: locked), keeps its claim alive while it plays, and the row goes in the transaction that saves the episode. A
#: process killed mid-episode stops renewing, so its claim expires and another process plays the episode again.
#: ``expires_at`` is in seconds since the epoch; 0 for a row nobody holds.
CLAIMS = Table(
    "episode_claims", METADATA,
    Column("run_id", String(128), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(64), primary_key=True),
    _required("position", Integer),
    Column("owner", String(128), nullable=True),
    _required("expires_at", Float, default=0.0),
    Index("ix_episode_claims_run_position", "run_id", "position"),
)

#: A study being served: its file's values and its own state (open or paused, the lobby, its groups).
STUDIES = Table(
    "studies", METADATA,
    Column("id", String(128), primary_key=True),
    _required("created_at", Float),
    _required("updated_at", Float),
    _required("config", JSON, default=dict),
    _required("state", JSON, default=dict),
)

#: One participant of a study, by the id their link gave; ``data`` is the whole session (stages, answers, group,
#: outcome), ``stage`` and ``outcome`` beside it for counting.
PARTICIPANTS = Table(
    "study_participants", METADATA,
    Column("study_id", String(128), ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True),
    Column("pid", String(64), primary_key=True),
    _required("stage", String(16)),
    Column("outcome", String(16), nullable=True),
    _required("updated_at", Float),
    _required("data", JSON),
)

#: One check of an agreement gate: its request, its verdict as it stands, and the token of the person's page.
#: ``key`` is the caller's idempotency key (unique within a gate configuration's run), so a caller that retries or
#: resumes gets this row back instead of a second check. The record of what was said is the episode
#: ``(run_id, episode_key)``; this row is what a caller polls. ``owner`` and ``lease_until``: the process playing
#: the check, and until when its claim holds (renewed while it plays; on the database's rows, so two processes
#: sharing a store never both play one check).
GATES = Table(
    "gates", METADATA,
    Column("id", String(32), primary_key=True),
    _required("run_id", String(128)),
    Column("key", String(200), nullable=True),
    _required("episode_key", String(64)),
    _required("status", String(16)),
    _required("token", String(64)),
    _required("created_at", Float),
    _required("updated_at", Float),
    Column("expires_at", Float, nullable=True),
    Column("owner", String(32), nullable=True),
    Column("lease_until", Float, nullable=True),
    _required("request", JSON),
    _required("verdict", JSON),
    UniqueConstraint("run_id", "key", name="uq_gates_run_key"),
)

#: A model's reply, kept by the request's hash (:func:`lexicoord.models.cache.cache_key`): the response cache of a
#: store on a server, which every machine of a run reads, so an episode one machine replays reuses the replies
#: another kept.
RESPONSES = Table(
    "responses", METADATA,
    Column("key", String(64), primary_key=True),
    _required("model", String(256)),
    _required("created_at", Float),
    _required("output", Text),
)

#: What is left of one model's rate budget in one run, shared by every process of the run
#: (:mod:`lexicoord.runs.rate_budget`). Rates are per second (``NULL``: that dimension has no limit); the levels
#: were read at ``at``, by the database's clock; ``spent_*`` count every request and token drawn, so the run's rate
#: can be read from them.
RATE_BUCKETS = Table(
    "rate_buckets", METADATA,
    Column("run_id", String(128), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("model", String(256), primary_key=True),
    Column("requests_rate", Float, nullable=True),
    _required("requests_cap", Float),
    _required("requests", Float),
    Column("tokens_rate", Float, nullable=True),
    _required("tokens_cap", Float),
    _required("tokens", Float),
    _required("at", Float),
    _required("spent_requests", BigInteger, default=0),
    _required("spent_tokens", BigInteger, default=0),
)
