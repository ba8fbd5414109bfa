"""Runs, episodes and events in any SQLAlchemy database (a SQLite file by default).

An episode is written once, when it ends, together with all its events, in a
single transaction: a crash leaves either the whole episode or nothing of it.
A failed episode that is retried is replaced by the new attempt in that same
transaction. A live room's game is also kept while it is played, as a spectator
sees it (:meth:`Store.keep_live`): that row becomes the ended episode when it is
saved, with every event, exactly as an episode written only at its end.

The answers of a game still in play are journaled in one table for campaigns
and rooms alike (:meth:`Store.add_episode_moves`, :meth:`Store.episode_moves`),
so a crash or a restart replays them; saving the episode settles its journal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TextIO, cast
from urllib.parse import quote

from pydantic_core import from_json, to_json
from sqlalchemy import (
    ColumnElement,
    Table,
    and_,
    case,
    create_engine,
    delete,
    event,
    func,
    insert,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.orm import Session

from lexicoord import paths
from lexicoord.core.events import Event, event_from_dict
from lexicoord.core.spec import EpisodeSpec
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.runs.lease import lease_from_env
from lexicoord.runs.names import check_run_name
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.schema import ClaimRow, EpisodeRow, EventRow, MoveRow, RoomRow, RunRow
from lexicoord.runs.store_errors import StoreError, explain, lock_wait, reason_of, store_name, watch

#: The key of a run's config holding how it was executed (values may change on a resume; all are kept).
RUNTIME = "runtime"
#: The newest migration in ``runs/migrations/versions`` (a test keeps the two equal): a store already there
#: is opened without loading Alembic.
SCHEMA_HEAD = "0010_gates"
#: The status of a live room's game still being played (an ended episode is ``done`` or ``failed``).
PLAYING = "playing"
#: The status of a second save of a finished episode whose content differs from the first's: kept under its own
#: key (``KEY~2`` ...) beside the first, which stands, and left out of reports (which say how many there are).
CONFLICT = "conflict"

log = logging.getLogger(__name__)


class Move(NamedTuple):
    """One journal entry: seat ``player``'s answer to its request ``idx`` in episode ``key`` of run ``run_id``."""

    run_id: str
    key: str
    player: str
    idx: int
    data: dict[str, Any]


class LiveGame(NamedTuple):
    """A live game in progress: its run, its spec as played and its place in the run."""

    run_id: str
    key: str
    spec: EpisodeSpec
    position: int

    @classmethod
    def of(cls, run_id: str, spec: EpisodeSpec, position: int) -> LiveGame:
        return cls(run_id, spec.key, spec, position)


class LiveWrite(NamedTuple):
    """Events of a live game as they happen; ``start``: the game (re)starts, so its row is made anew."""

    game: LiveGame
    events: Sequence[Event]
    start: bool = False


class _Encoded(str):
    """A value already written as JSON (an event serialised by pydantic): stored as it is."""


def _json(value: Any) -> str:
    """JSON columns' writer: pydantic's serialiser, several times faster than :func:`json.dumps` on the
    event data every save writes (NaN and infinities become null, which the standard JSON type cannot hold).
    Its reader is pydantic's parser, likewise (a report parses every event it reads)."""
    return value if isinstance(value, _Encoded) else to_json(value).decode()


#: Episodes and events are written by plain statements on their tables (one executemany each), not through the
#: ORM's bulk path, which goes row by row when it hands back ids.
_INSERT_EVENTS = insert(cast(Table, EventRow.__table__))
_INSERT_EPISODES = insert(cast(Table, EpisodeRow.__table__))
#: The same tables for the statements a live room sends many times a second (the ORM's compile path for an
#: UPDATE or SELECT costs several times the statement itself).
_EPISODES = cast(Table, EpisodeRow.__table__)
_RUNS = cast(Table, RunRow.__table__)


def _event_row(episode_id: int, e: Event) -> dict[str, Any]:
    return {"episode_id": episode_id, "seq": e.seq, "type": e.type, "agent": e.agent, "round": e.round, "ts": e.ts,
            "data": _Encoded(e.model_dump_json())}


def _hide_password(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def _sqlite_pragmas(wait: float) -> Callable[[Any, Any], None]:
    """Every new SQLite connection's settings; ``wait``: seconds to wait on another process's lock."""

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")  # first: switching to WAL may itself wait for a lock
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    return on_connect


#: Config keys that describe a run rather than make its episodes (the paper's numbers it is compared with, and which
#: of its models stand for the paper's): a resume replaces them and never refuses for them.
NOTES = ("published", "paper_models")


def _grew(before: Any, after: Any) -> bool:
    """Whether a growable config value only grew: a count rose or stayed, a list kept every entry it had. A
    mapping (a study's conditions) is the study's to judge: it refuses a change to a condition that has begun,
    and takes one to a condition no group has played."""
    if isinstance(after, dict) and (before is None or isinstance(before, dict)):
        return True
    if isinstance(before, bool) or isinstance(after, bool):
        return bool(before == after)
    if isinstance(before, int | float) and isinstance(after, int | float):
        return after >= before
    if isinstance(before, list) and isinstance(after, list):
        return all(b in after for b in before)
    return bool(before == after)



def differences(key: str, stored: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """Each leaf of a setting that differs, with its stored and its new value (``settings.qhat``, not the whole
    ``settings`` table), so that a refused change says exactly what changed."""
    if isinstance(stored, dict) and isinstance(new, dict):
        return [d for k in sorted(set(stored) | set(new), key=str) if stored.get(k) != new.get(k)
                for d in differences(f"{key}.{k}", stored.get(k), new.get(k))]
    return [(key, stored, new)]

class Store:
    def __init__(self, url: str | None = None) -> None:
        raw_url = paths.db_url(url) if url else paths.default_db_url()
        #: Seconds to wait for a store another process holds locked (``LEXICOORD_DB_WAIT``).
        self.wait = lock_wait()
        try:
            self.engine: Engine = create_engine(raw_url, json_serializer=_json, json_deserializer=from_json)
        except (ArgumentError, ImportError) as exc:
            hint = ""
            if isinstance(exc, ImportError) and raw_url.startswith(("postgresql", "postgres")):
                hint = "; for PostgreSQL install the driver (pip install 'lexicoord[postgres]') and use postgresql://"
            raise ConfigError(f"Cannot open the store at '{_hide_password(raw_url)}': {exc}{hint}.") from None
        #: The URL with any password masked: safe to print.
        self.url = self.engine.url.render_as_string(hide_password=True)
        sqlite = self.engine.dialect.name == "sqlite"
        #: How sentences about this store name it: a SQLite store by its file.
        self.where = store_name(self.url, self.engine.url.database, sqlite)
        if sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas(self.wait))
        #: One writer at a time in this process on SQLite (see :meth:`writing`); PostgreSQL takes them all at once.
        self._write_lock: contextlib.AbstractContextManager[Any] = threading.RLock() if sqlite \
            else contextlib.nullcontext()
        watch(self.engine, self.where, self.wait)
        try:
            self._migrate()
        except DBAPIError as exc:
            reason = reason_of(exc)
            if sqlite:  # a damaged, read-only or locked file: say which, and what to do
                raise StoreError(explain(reason, self.where, self.wait)) from None
            raise ConfigError(f"Cannot open the store at '{self.url}': {reason}.") from None

    def _migrate(self) -> None:
        """Bring the database to the newest schema (a new file gets every migration).

        Two processes opening a new file at once both try to create the tables; the
        one that loses finds them made and, on a later look, nothing left to do. Any such
        clash is retried until the store's wait (``LEXICOORD_DB_WAIT``) has passed; a store
        another process keeps locked has already waited that long in its first attempt,
        so the person hears of the lock after one wait.
        """
        if self._at_head():
            return  # the usual case: Alembic (a fifth of a command's start-up) is not even imported
        from alembic import command
        from alembic.config import Config as AlembicConfig

        config = AlembicConfig()
        config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                with self.engine.begin() as connection:
                    config.attributes["connection"] = connection
                    command.upgrade(config, "head")
                return
            except (OperationalError, IntegrityError, ProgrammingError) as exc:
                # PostgreSQL says a table the other process just made "already exists" as a ProgrammingError.
                transient = ("already exists", "UNIQUE", "duplicate key", "database is locked")
                # Retried until the store's wait has passed, not a fixed number of times: on a busy machine the
                # process that made the tables may take longer than a few tries to finish.
                if time.monotonic() - started >= self.wait or not any(t in str(exc.orig) for t in transient):
                    raise
                attempt += 1
                time.sleep(min(0.05 * attempt, 0.5))

    def _at_head(self) -> bool:
        """Whether the database already has the newest schema, read in one query (any doubt: no, and the
        migration that follows says what is wrong)."""
        try:
            with self.engine.connect() as connection:
                found = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        except DBAPIError:
            return False
        return list(found) == [SCHEMA_HEAD]

    def session(self) -> Session:
        """A session on the store's database, for modules that keep their own tables there (live rooms)."""
        return Session(self.engine, expire_on_commit=False)

    @contextlib.contextmanager
    def writing(self) -> Iterator[Session]:
        """A session in a transaction that writes, committed when the block ends.

        SQLite takes one writer at a time, and a writer that finds the file locked waits in SQLite's busy
        handler, which sleeps in steps of up to 100 ms and may sleep on after the lock is gone. A server writes
        from several threads at once (a study's participants, its rooms' moves, a game being stored), so on
        SQLite the writers of this process queue on a lock here instead, and each starts the moment the one
        before it commits. Other processes still meet SQLite's own lock (``LEXICOORD_DB_WAIT``)."""
        with self._write_lock, self.session() as s, s.begin():
            yield s

    def close(self) -> None:
        self.engine.dispose()

    # runs ---------------------------------------------------------------------------------------
    def open_run(self, run_id: str, protocol: str, config: dict[str, Any], total: int,
                 runtime: dict[str, Any] | None = None, grows: Collection[str] = ()) -> RunInfo:
        """Create the run, or reopen it to resume.

        Resuming with another protocol or other run settings is refused: the episodes
        already stored were made under the first ones, and one run must not mix them.
        The config keys in ``grows`` (how many items, which variants) may grow on a
        resume: a count may rise and a list gain entries, since that only adds episodes;
        the stored config then holds the grown values. ``runtime`` (how the run was
        executed, such as its concurrency) may differ on a resume: every value used is
        kept, in order, under the config's ``runtime`` key.
        """
        now = time.time()
        config = json.loads(json.dumps(config))  # as it will read back
        config.pop(RUNTIME, None)
        used = json.loads(json.dumps(runtime or {}))
        for attempt in range(2):
            try:
                self._open_run(run_id, protocol, config, total, used, now, frozenset(grows))
                break
            except IntegrityError:
                # Several processes started on one new run at once: one created it, the others reopen it.
                if attempt == 1:
                    raise ConfigError(f"Run '{run_id}' could not be created or reopened; try again.") from None
        return self.run(run_id)

    def _open_run(self, run_id: str, protocol: str, config: dict[str, Any], total: int, used: dict[str, Any],
                  now: float, grows: frozenset[str]) -> None:
        with self.writing() as s:
            # Locked, so that processes reopening the run at once each add their runtime values.
            row = s.get(RunRow, run_id, with_for_update=True)
            if row is None:
                check_run_name(run_id)  # a new name must be one that is safe as a key and a folder
                s.add(
                    RunRow(
                        id=run_id, protocol=protocol, status="running", created_at=now, updated_at=now,
                        config={**config, RUNTIME: {k: [v] for k, v in used.items()}} if used else config,
                        total_episodes=total,
                    )
                )
            else:
                if row.protocol != protocol:
                    raise ConfigError(
                        f"Run '{run_id}' exists with protocol '{row.protocol}', not '{protocol}'; "
                        "choose another run name."
                    )
                stored = {k: v for k, v in row.config.items() if k != RUNTIME}
                changed = sorted(k for k in set(stored) | set(config)
                                 if stored.get(k) != config.get(k) and k not in NOTES)
                shrunk = [k for k in changed if k in grows and not _grew(stored.get(k), config.get(k))]
                if shrunk:
                    was = ", ".join(f"{k}={stored.get(k)!r}" for k in shrunk)
                    raise ConfigError(
                        f"Run '{run_id}' already holds {was}; a run grows but never shrinks: give at least as "
                        "much, or choose another run name."
                    )
                changed = [k for k in changed if k not in grows]
                if changed:
                    said = "; ".join(f"{key} was {was!r} and is now {now!r}" for k in changed
                                     for key, was, now in differences(k, stored.get(k), config.get(k)))
                    raise ConfigError(
                        f"Run '{run_id}' was started with other settings: {said}; resume it with the same "
                        "settings or choose another run name."
                    )
                before = dict(row.config.get(RUNTIME) or {})
                for k, v in used.items():
                    before[k] = [*before.get(k, []), *([v] if v not in before.get(k, []) else [])]
                stored = {**stored, **{k: config[k] for k in (*grows, *NOTES) if k in config}}
                row.config = {**stored, RUNTIME: before} if before else stored
                row.status, row.updated_at, row.total_episodes = "running", now, total

    def set_run_status(self, run_id: str, status: str) -> None:
        with self.writing() as s:
            s.execute(update(_RUNS).where(_RUNS.c.id == run_id).values(status=status, updated_at=time.time()))

    def _counts(self, s: Session, run_ids: Sequence[str]) -> dict[tuple[str, str], int]:
        rows = s.execute(
            select(EpisodeRow.run_id, EpisodeRow.status, func.count())
            .where(EpisodeRow.run_id.in_(run_ids))
            .group_by(EpisodeRow.run_id, EpisodeRow.status)
        )
        return {(r, st): n for r, st, n in rows}

    def _alive(self, s: Session, rows: Sequence[RunRow]) -> set[str]:
        """Of the ``running`` rows, those some process may still be playing.

        A process killed outright (a signal, a segmentation fault in a native library, a power cut) cannot
        say it stopped, so ``running`` is read as ``interrupted`` once nothing of the run is alive: no claim
        unexpired (a playing process renews its claims, see runs/claims.py), no change to the run within a
        lease, and no live room on it (rooms play without claims)."""
        running = [r.id for r in rows if r.status == "running"]
        if not running:
            return set()
        now, lease = time.time(), lease_from_env()
        held = set(s.scalars(select(ClaimRow.run_id).where(ClaimRow.run_id.in_(running), ClaimRow.expires_at >= now)
                             .distinct()))
        rooms = set(s.scalars(select(RoomRow.run_id).where(RoomRow.run_id.in_(running))))
        recent = {r.id for r in rows if r.status == "running" and now - r.updated_at < lease}
        return held | rooms | recent

    def _infos(self, s: Session, rows: Sequence[RunRow]) -> list[RunInfo]:
        counts, alive = self._counts(s, [r.id for r in rows]), self._alive(s, rows)
        return [self._info(r, counts, alive) for r in rows]

    def _info(self, row: RunRow, counts: dict[tuple[str, str], int], alive: set[str]) -> RunInfo:
        status = "interrupted" if row.status == "running" and row.id not in alive else row.status
        return RunInfo(
            id=row.id, protocol=row.protocol, status=status, created_at=row.created_at,
            updated_at=row.updated_at, config=row.config or {}, total_episodes=row.total_episodes,
            done=counts.get((row.id, "done"), 0), failed=counts.get((row.id, "failed"), 0),
            conflicts=counts.get((row.id, CONFLICT), 0),
        )

    def runs(self) -> list[RunInfo]:
        with self.session() as s:
            return self._infos(s, list(s.scalars(select(RunRow).order_by(RunRow.created_at.desc()))))

    def run(self, run_id: str) -> RunInfo:
        """The run named ``run_id`` or by a unique prefix of it."""
        with self.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                like = list(s.scalars(select(RunRow).where(RunRow.id.startswith(run_id, autoescape=True))))
                if len(like) != 1:
                    hint = "several runs start with it" if like else "run 'lexicoord runs list' to see the runs"
                    raise LexicoordError(f"No run '{run_id}' in {self.url} ({hint}).")
                row = like[0]
            return self._infos(s, [row])[0]

    # episodes -----------------------------------------------------------------------------------
    def finished_keys(self, run_id: str, include_failed: bool = False) -> set[str]:
        statuses = ["done", "failed"] if include_failed else ["done"]
        with self.session() as s:
            return set(
                s.scalars(select(EpisodeRow.key).where(EpisodeRow.run_id == run_id, EpisodeRow.status.in_(statuses)))
            )

    def save_episode(self, record: EpisodeRecord, events: Sequence[Event]) -> int:
        """Write an ended episode and its events atomically; a prior failed attempt is replaced."""
        return self.save_episodes([(record, events)])[0]

    def save_episodes(self, batch: Sequence[tuple[EpisodeRecord, Sequence[Event]]]) -> list[int]:
        """Write several ended episodes in one transaction (all or none); returns their ids."""
        with self.writing() as s:
            keys = [(record.run_id, record.key) for record, _ in batch]
            if len(set(keys)) < len(keys):  # the same episode twice: each save sees the one before
                return [self._write_episodes(s, [entry])[0] for entry in batch]
            return self._write_episodes(s, batch)

    def _write_episodes(self, s: Session, batch: Sequence[tuple[EpisodeRecord, Sequence[Event]]]) -> list[int]:
        """Each step is one statement for the whole batch, not one per episode: a save is a write that other
        processes' claims and saves queue behind, so its length is theirs too."""
        if not batch:
            return []
        keys = [(record.run_id, record.key) for record, _ in batch]
        # The episodes' claims (see runs/claims.py) go with the save, whoever saves them.
        s.execute(delete(ClaimRow).where(tuple_(ClaimRow.run_id, ClaimRow.key).in_(keys)))
        these = tuple_(EpisodeRow.run_id, EpisodeRow.key).in_(keys)
        priors = {(p.run_id, p.key): p for p in s.scalars(select(EpisodeRow).where(these))}
        playing = [k for k, p in priors.items() if p.status == PLAYING]
        if playing:
            # Locked, so that a write of a game's live events (keep_live) either ends before this save, and
            # its events are replaced below, or waits and then finds the game ended.
            locked = select(EpisodeRow).where(tuple_(EpisodeRow.run_id, EpisodeRow.key).in_(playing))
            for p in s.scalars(locked.with_for_update().execution_options(populate_existing=True)):
                priors[(p.run_id, p.key)] = p
        ids: dict[tuple[str, str], int] = {}
        attempts: dict[tuple[str, str], int] = {}
        kept: dict[tuple[str, str], EpisodeRow] = {}  # live games: the game as it was shown becomes the episode
        for key, prior in priors.items():
            if prior.status == "done":
                ids[key] = prior.id  # done meanwhile (another process on the same run): the first result stands
            elif prior.status == PLAYING:
                kept[key], attempts[key] = prior, prior.attempt
            else:
                attempts[key] = prior.attempt + 1
        batch = [self._second_save(s, record, events, priors[(record.run_id, record.key)])
                 if (record.run_id, record.key) in ids else (record, events) for record, events in batch]
        answer = [(record.run_id, record.key) for record, _ in batch]  # a conflict's id is its own row's
        replaced = [p.id for k, p in priors.items() if k not in ids]
        if replaced:
            s.execute(delete(EventRow).where(EventRow.episode_id.in_(replaced)))
            gone = [p.id for k, p in priors.items() if k not in ids and k not in kept]
            if gone:
                s.execute(delete(EpisodeRow).where(EpisodeRow.id.in_(gone)).execution_options(
                    synchronize_session=False))
        saving = [(record, events) for record, events in batch if (record.run_id, record.key) not in ids]
        self._settle_moves(s, [record for record, _ in saving])
        new: list[dict[str, Any]] = []
        for record, _ in saving:
            key = (record.run_id, record.key)
            data = record.model_dump(exclude={"id", "version"})
            data["attempt"] = attempts.get(key, 1)
            if key in kept:
                for name, value in data.items():
                    setattr(kept[key], name, value)
            else:
                new.append(data)
        if kept:
            s.flush()
            ids.update((key, row.id) for key, row in kept.items())
        if new:
            # One executemany; the ids are read back by key.
            s.execute(_INSERT_EPISODES, new)
            made = tuple_(EpisodeRow.run_id, EpisodeRow.key).in_([(d["run_id"], d["key"]) for d in new])
            ids.update(((run_id, key), row_id) for run_id, key, row_id in
                       s.execute(select(EpisodeRow.run_id, EpisodeRow.key, EpisodeRow.id).where(made)))
        rows = [_event_row(ids[(record.run_id, record.key)], e) for record, events in saving for e in events]
        if rows:
            s.execute(_INSERT_EVENTS, rows)
        return [ids[key] for key in answer]

    def _second_save(self, s: Session, record: EpisodeRecord, events: Sequence[Event],
                  prior: EpisodeRow) -> tuple[EpisodeRecord, Sequence[Event]]:
        """A save that meets the same episode finished already. The same content (another process played it
        too, to the same end, saying the same) stands as it is. Other content is an error, logged and kept
        beside the first under ``KEY~N`` with status ``conflict``: nothing a save brings is lost. A failed try
        after the success is told in the log and not kept (it adds no result)."""
        if record.status != "done":
            log.warning("run %s: a failed try of episode %s came after it was done; the done one stands (%s)",
                        record.run_id, record.key, (record.error or "")[:200])
            return record, events
        theirs = from_json(_json({"spec": prior.spec, "outcome": prior.outcome}))
        ours = from_json(_json({"spec": record.spec, "outcome": record.outcome}))
        differs = [k for k in ("spec", "outcome") if ours[k] != theirs[k]]
        stored = s.scalars(select(EventRow.data).where(EventRow.episode_id == prior.id).order_by(EventRow.seq))
        if _said(event_from_dict(d) for d in stored) != _said(events):
            differs.append("record of what was said and done")
        if not differs:
            return record, events
        like = s.scalars(select(EpisodeRow.key).where(EpisodeRow.run_id == record.run_id,
                                                      EpisodeRow.key.like(f"{record.key}~%"))).all()
        key = f"{record.key}~{len(like) + 2}"
        log.error("run %s: episode %s was saved again with another %s than the one saved first; the first stands "
                  "and this one is kept as %s (status %s)", record.run_id, record.key, " and ".join(differs), key,
                  CONFLICT)
        # The episode is done: what its second player journalled is settled with it.
        s.execute(delete(MoveRow).where(MoveRow.run_id == record.run_id, MoveRow.key == record.key))
        return record.model_copy(update={
            "key": key, "status": CONFLICT,
            "error": f"saved after episode {record.key} of this run had ended with another {' and '.join(differs)}"}), \
            events

    def _settle_moves(self, s: Session, records: Sequence[EpisodeRecord]) -> None:
        """Saved episodes' journals: cleared when they are done; when one failed, only its failed moves go, so
        a retry replays what was answered and asks the rest again."""
        done = [(r.run_id, r.key) for r in records if r.status == "done"]
        failed = [(r.run_id, r.key) for r in records if r.status != "done"]
        if done:
            s.execute(delete(MoveRow).where(tuple_(MoveRow.run_id, MoveRow.key).in_(done)))
        if failed:
            rows = s.scalars(select(MoveRow).where(tuple_(MoveRow.run_id, MoveRow.key).in_(failed)))
            errors = [row.id for row in rows if "error" in row.data]
            if errors:
                s.execute(delete(MoveRow).where(MoveRow.id.in_(errors)))

    def add_episode_move(self, run_id: str, key: str, player: str, idx: int, data: dict[str, Any]) -> None:
        """Journal one answer of an unfinished episode; returns once it is committed."""
        self.add_episode_moves([Move(run_id, key, player, idx, data)])

    def add_episode_moves(self, moves: Sequence[Move]) -> None:
        """Journal several answers, of any episodes, in one transaction (all or none): a server's moves that
        arrive while a commit is under way share the next one."""
        if not moves:
            return
        with self.writing() as s:
            s.execute(insert(MoveRow), [m._asdict() for m in moves])

    def episode_moves(self, run_id: str, key: str) -> dict[str, list[dict[str, Any]]]:
        """An unfinished episode's journal, each player's answers in order (empty when there is none)."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self.session() as s:
            rows = s.execute(select(MoveRow.player, MoveRow.data).where(MoveRow.run_id == run_id, MoveRow.key == key)
                             .order_by(MoveRow.player, MoveRow.idx))
            for player, data in rows:
                out.setdefault(player, []).append(data)
        return out

    def clear_episode_moves(self, run_id: str, key: str) -> None:
        """Forget an episode's journal (a live room does once the game is stored, whatever its end)."""
        with self.writing() as s:
            s.execute(delete(MoveRow).where(MoveRow.run_id == run_id, MoveRow.key == key))

    # live games, kept as they are played ---------------------------------------------------------
    def keep_live(self, writes: Sequence[LiveWrite]) -> None:
        """Keep what a spectator may see of live games in progress, in one transaction, so the run viewer
        shows a game while it is played.

        A game in progress is an episode row with status ``playing`` whose spec has no item and whose seed
        is not kept (a task's answer, a Werewolf deal are in the item and the seed), holding only its public
        events (those everyone at the table sees; a role, a wolves' channel and a model's prompt are not).
        A ``start`` write makes the row, or makes it anew when a restarted game is played again from its
        start. Writes for a game that has ended meanwhile are dropped: the saved episode stands.
        :meth:`save_episode` turns the row into the ended episode, same id, with every event.
        """
        if not writes:
            return
        now = time.time()
        with self.writing() as s:
            ids: dict[tuple[str, str], int | None] = {}
            rows: list[dict[str, Any]] = []
            for w in writes:
                at = (w.game.run_id, w.game.key)
                if w.start or at not in ids:
                    if w.start and rows:  # a game played again from its start clears what came before
                        s.execute(_INSERT_EVENTS, rows)
                        rows = []
                    ids[at] = self._live_row(s, w.game, w.start, now)
                episode_id = ids[at]
                if episode_id is not None:
                    rows += [_event_row(episode_id, e) for e in w.events if e.audience.public]
            if rows:
                s.execute(_INSERT_EVENTS, rows)

    def _live_row(self, s: Session, game: LiveGame, start: bool, now: float) -> int | None:
        """The id of ``game``'s ``playing`` row (made or made anew on ``start``); None once the game ended."""
        c = _EPISODES.c
        where = (c.run_id == game.run_id, c.key == game.key)
        # An update first: it locks the row (and, on SQLite, the store) before anything is read, so the save
        # that ends the game is either wholly before this write or wholly after it.
        head = _live_head(game, now) if start else {"finished_at": now}
        s.execute(update(_EPISODES).where(*where, c.status == PLAYING).values(**head))
        found = s.execute(select(c.id, c.status).where(*where)).first()
        if found is not None and found.status == PLAYING:
            if start:
                s.execute(delete(EventRow).where(EventRow.episode_id == found.id))
            return int(found.id)
        if not start or found is not None:
            return None
        row = EpisodeRow(run_id=game.run_id, key=game.key, **head)
        s.add(row)
        s.flush()
        return row.id

    def drop_live(self, run_id: str, keys: Sequence[str] | None = None) -> None:
        """Forget a run's games in progress (a room that closes with its game cut short never ends it); with
        ``keys``, only those games (a run that several rooms share keeps the others' games under way)."""
        if keys is not None and not keys:
            return
        with self.writing() as s:
            where = [EpisodeRow.run_id == run_id, EpisodeRow.status == PLAYING]
            if keys is not None:
                where.append(EpisodeRow.key.in_(list(keys)))
            playing = select(EpisodeRow.id).where(*where)
            s.execute(delete(EventRow).where(EventRow.episode_id.in_(playing)))
            s.execute(delete(EpisodeRow).where(*where))

    def episodes(self, run_id: str, keys: Collection[str] | None = None,
                 conflicts: bool = False) -> list[EpisodeRecord]:
        """The run's ended episodes (a live game in progress is the run viewer's to show, not a result); with
        ``keys``, only those; with ``conflicts``, second saves kept beside the first (status ``conflict``) too."""
        if keys is not None and not keys:
            return []
        with self.session() as s:
            query = select(EpisodeRow).where(EpisodeRow.run_id == run_id, EpisodeRow.status.not_in(_hidden(conflicts)))
            if keys is not None:
                query = query.where(EpisodeRow.key.in_(list(keys)))
            rows = s.scalars(query.order_by(EpisodeRow.position))
            return [
                EpisodeRecord.model_validate({c.name: getattr(r, c.name) for c in EpisodeRow.__table__.columns})
                for r in rows
            ]

    def events(self, episode_id: int) -> list[Event]:
        with self.session() as s:
            rows = s.scalars(select(EventRow.data).where(EventRow.episode_id == episode_id).order_by(EventRow.seq))
            return [event_from_dict(d) for d in rows]

    def iter_run_events(self, run_id: str, page: int = 200, types: Sequence[str] | None = None,
                        keys: Collection[str] | None = None,
                        conflicts: bool = False) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
        """The run's ended episodes in grid order, each with its events, read ``page`` episodes at a time.

        Two queries a page (the episodes after the last one read, then all their events), not one per
        episode; only a page is held, so a report of a million events reads it in the memory of a page.
        ``types``: only events of these types (a statistic that reads choices need not parse every prompt);
        ``keys``: only these episodes (one study room's games in a run every group shares); ``conflicts``:
        second saves kept beside the first (never a result: a report counts them apart).
        """
        if keys is not None and not keys:
            return
        after: tuple[int, int] | None = None
        while True:
            with self.session() as s:
                query = select(EpisodeRow).where(EpisodeRow.run_id == run_id,
                                                 EpisodeRow.status.not_in(_hidden(conflicts)))
                if keys is not None:
                    query = query.where(EpisodeRow.key.in_(list(keys)))
                if after is not None:
                    query = query.where(tuple_(EpisodeRow.position, EpisodeRow.id) > tuple_(*after))
                records = [_record(r) for r in s.scalars(query.order_by(EpisodeRow.position, EpisodeRow.id)
                                                          .limit(page))]
                if not records:
                    return
                ids = [r.id for r in records]
                by_episode: dict[int, list[Event]] = {i: [] for i in ids if i is not None}
                wanted = select(EventRow.episode_id, EventRow.data).where(EventRow.episode_id.in_(ids))
                if types is not None:
                    wanted = wanted.where(EventRow.type.in_(list(types)))
                for episode_id, data in s.execute(wanted.order_by(EventRow.episode_id, EventRow.seq)):
                    by_episode[episode_id].append(event_from_dict(data))
            for record in records:
                assert record.id is not None
                yield record, by_episode.pop(record.id)
            last = records[-1]
            assert last.id is not None
            after = (last.position, last.id)

    def export_jsonl(self, run_id: str, out: TextIO) -> int:
        """One line for the run, then per episode one line for it and one per event. Returns lines written."""
        run = self.run(run_id)
        out.write(json.dumps({"record": "run", **run.model_dump(mode="json")}, ensure_ascii=False) + "\n")
        lines = 1
        for episode, events in self.iter_run_events(run.id, conflicts=True):
            out.write(json.dumps({"record": "episode", **episode.model_dump(mode="json")}, ensure_ascii=False) + "\n")
            lines += 1
            for e in events:
                payload = {"record": "event", "episode_id": episode.id, **e.model_dump(mode="json")}
                out.write(json.dumps(payload, ensure_ascii=False) + "\n")
                lines += 1
        return lines

    # reading page by page (the run viewer) -------------------------------------------------------
    def read_only(self) -> Store:
        """Another handle on this store's database that can only read, for viewers that must never change it.

        SQLite is opened with ``mode=ro`` (the library refuses every write, and nothing is migrated);
        PostgreSQL sessions start read-only (``default_transaction_read_only``); another database gets
        read-only sessions. Reads go on while a campaign writes: SQLite's WAL
        lets readers and one writer work at once.
        """
        url = self.engine.url
        connect_args: dict[str, Any] = {}
        if url.get_backend_name() == "sqlite":
            path = Path(url.database or "").resolve()
            url = URL.create("sqlite", database=f"file:{quote(str(path))}", query={"mode": "ro", "uri": "true"})
        elif url.get_backend_name() == "postgresql":
            # The server's own session default: a SET on connect would be undone by the pool's first rollback.
            connect_args["options"] = "-c default_transaction_read_only=on"
        reader = object.__new__(Store)
        reader.engine = create_engine(url, connect_args=connect_args, json_deserializer=from_json)
        reader.url = self.url
        reader.where, reader.wait = self.where, self.wait
        reader._write_lock = contextlib.nullcontext()  # its writes are refused by the database itself
        watch(reader.engine, self.where, self.wait)
        event.listen(reader.engine, "connect", _read_only_session(self.wait))
        return reader

    def run_page(self, limit: int, before: tuple[float, str] | None = None) -> list[RunInfo]:
        """Up to ``limit`` runs, newest first, older than ``before`` (its ``created_at`` and ``id``)."""
        with self.session() as s:
            query = select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc()).limit(limit)
            if before is not None:
                query = query.where(tuple_(RunRow.created_at, RunRow.id) < tuple_(*before))
            return self._infos(s, list(s.scalars(query)))

    def room_run_ids(self, run_ids: Sequence[str]) -> set[str]:
        """Which of ``run_ids`` are live rooms' runs (the others are campaigns)."""
        with self.session() as s:
            return set(s.scalars(select(RoomRow.run_id).where(RoomRow.run_id.in_(run_ids))))

    def episode(self, episode_id: int) -> EpisodeRecord | None:
        with self.session() as s:
            row = s.get(EpisodeRow, episode_id)
            return None if row is None else _record(row)

    def episode_page(self, run_id: str, *, limit: int, after: tuple[int, int] | None = None,
                     before: tuple[int, int] | None = None, status: str | None = None,
                     outcome: Mapping[str, Scalar] | None = None, settings: Mapping[str, Scalar] | None = None,
                     ) -> list[EpisodeRecord]:
        """Up to ``limit`` episodes of a run in grid order, after (or before) a ``(position, id)``, that have
        ``status`` and the given outcome and settings values; filtered in the database, never in memory."""
        where = _episode_filters(run_id, status, outcome or {}, settings or {}, self.engine.dialect.name)
        key = tuple_(EpisodeRow.position, EpisodeRow.id)
        query = select(EpisodeRow).where(*where)
        if before is not None:
            query = query.where(key < tuple_(*before)).order_by(EpisodeRow.position.desc(), EpisodeRow.id.desc())
        else:
            if after is not None:
                query = query.where(key > tuple_(*after))
            query = query.order_by(EpisodeRow.position, EpisodeRow.id)
        with self.session() as s:
            rows = [_record(r) for r in s.scalars(query.limit(limit))]
        return rows[::-1] if before is not None else rows

    def count_episodes(self, run_id: str, *, status: str | None = None, outcome: Mapping[str, Scalar] | None = None,
                       settings: Mapping[str, Scalar] | None = None) -> int:
        where = _episode_filters(run_id, status, outcome or {}, settings or {}, self.engine.dialect.name)
        with self.session() as s:
            return int(s.scalar(select(func.count()).select_from(EpisodeRow).where(*where)) or 0)

    def episode_shapes(self, run_id: str, limit: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The outcome and settings of a run's first ``limit`` episodes (not their items), to offer filters."""
        query = (select(EpisodeRow.outcome, EpisodeRow.spec["settings"]).where(EpisodeRow.run_id == run_id)
                 .order_by(EpisodeRow.position, EpisodeRow.id).limit(limit))
        with self.session() as s:
            return [(o if isinstance(o, dict) else {}, st if isinstance(st, dict) else {}) for o, st in s.execute(query)]

    def event_page(self, episode_id: int, *, limit: int, after: int | None = None, before: int | None = None,
                   types: Sequence[str] | None = None) -> list[Event]:
        """Up to ``limit`` events of an episode in order, after (or before) a ``seq``: one index range read."""
        query = select(EventRow.data).where(EventRow.episode_id == episode_id)
        if types:
            query = query.where(EventRow.type.in_(types))
        if before is not None:
            query = query.where(EventRow.seq < before).order_by(EventRow.seq.desc())
        else:
            if after is not None:
                query = query.where(EventRow.seq > after)
            query = query.order_by(EventRow.seq)
        with self.session() as s:
            events = [event_from_dict(d) for d in s.scalars(query.limit(limit))]
        return events[::-1] if before is not None else events

    def event_span(self, episode_id: int) -> tuple[int, int, int]:
        """An episode's event count and its first and last ``seq`` (0, -1, -1 with none)."""
        query = select(func.count(), func.min(EventRow.seq), func.max(EventRow.seq)).where(EventRow.episode_id == episode_id)
        with self.session() as s:
            n, first, last = s.execute(query).one()
        return int(n), -1 if first is None else int(first), -1 if last is None else int(last)


def _read_only_session(wait: float) -> Callable[[Any, Any], None]:
    """Every connection of a read-only handle refuses writes itself, whatever the URL allowed."""

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        if type(dbapi_conn).__module__.startswith("sqlite3"):
            cur.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
            cur.execute("PRAGMA query_only=ON")
        else:
            cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            dbapi_conn.commit()  # kept: a SET in a transaction the pool rolls back would be lost
        cur.close()

    return on_connect


#: A value an episode filter compares with (a JSON scalar).
Scalar = str | int | float | bool | None


def _json_equals(value: Any, wanted: Scalar, dialect: str) -> ColumnElement[bool]:
    """A JSON field equal to ``wanted``, compared as its own type (so ``true`` is not the string "true").

    SQLite's json_extract already gives each JSON type its own SQL type. PostgreSQL's ``->>`` gives text
    for every type, so there the field's JSON type is checked first, and a cast is made only on a field of
    that type (a cast of "a" to a number would be an error, not a mismatch).
    """
    if wanted is None:
        return value.as_string().is_(None)  # type: ignore[no-any-return]
    if dialect == "postgresql":
        kind = func.json_typeof(value)
        if isinstance(wanted, bool):
            return case((kind == "boolean", value.as_boolean()), else_=None) == wanted
        if isinstance(wanted, int | float):
            return case((kind == "number", value.as_float()), else_=None) == float(wanted)
        return and_(kind == "string", value.as_string() == wanted)
    if isinstance(wanted, bool):
        return value.as_boolean() == wanted  # type: ignore[no-any-return]
    if isinstance(wanted, int | float):
        return value.as_float() == float(wanted)  # type: ignore[no-any-return]
    return value.as_string() == wanted  # type: ignore[no-any-return]


def _episode_filters(run_id: str, status: str | None, outcome: Mapping[str, Scalar],
                     settings: Mapping[str, Scalar], dialect: str) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [EpisodeRow.run_id == run_id]
    if status is not None:
        where.append(EpisodeRow.status == status)
    where += [_json_equals(EpisodeRow.outcome[k], v, dialect) for k, v in outcome.items()]
    where += [_json_equals(EpisodeRow.spec[("settings", k)], v, dialect) for k, v in settings.items()]
    return where


def _live_head(game: LiveGame, now: float) -> dict[str, Any]:
    """A game in progress as its episode row shows it: no item and no seed (see :meth:`Store.keep_live`)."""
    spec = {**game.spec.model_dump(mode="json"), "item": {}}
    return {"position": game.position, "item_id": game.spec.item_id, "repetition": game.spec.repetition, "seed": 0,
            "spec": spec, "status": PLAYING, "error": None, "outcome": None, "started_at": now, "finished_at": now,
            "attempt": 1, "model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}


def _said(events: Iterable[Event]) -> list[dict[str, Any]]:
    """An episode's events as what was said and done, for telling two saves of it apart: without the moment each
    happened, and without the model calls (their timings differ on every play; what they answered is in the
    events that follow them)."""
    return [from_json(_json(e.model_dump(mode="json", exclude={"ts"}))) for e in events if e.type != "model_call"]


def _hidden(conflicts: bool) -> tuple[str, ...]:
    """The statuses a reader of results leaves out: games still being played, and (unless asked) conflicts."""
    return (PLAYING,) if conflicts else (PLAYING, CONFLICT)


def _record(row: EpisodeRow) -> EpisodeRecord:
    return EpisodeRecord.model_validate({c.name: getattr(row, c.name) for c in EpisodeRow.__table__.columns})
