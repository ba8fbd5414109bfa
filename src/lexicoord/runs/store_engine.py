"""The store's database: opening it, bringing its schema up to date, and the sessions every concern works in.

Kept apart from what is stored because no concern needs to know how the database was opened: each reads in a
:meth:`Database.session` and writes in :meth:`Database.writing`, on SQLite and PostgreSQL alike, and a
read-only handle (:meth:`Database.read_only`) serves every concern's reads unchanged.

Opening a store needs SQLAlchemy's Core alone: the ORM is imported when a concern first asks for a session, so a
command that only reads with Core statements (``lexicoord runs list``) starts without it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote

from pydantic_core import from_json, to_json
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, OperationalError, ProgrammingError

from lexicoord import paths
from lexicoord.errors import ConfigError
from lexicoord.runs.store_errors import StoreError, explain, lock_wait, reason_of, store_name, watch

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

#: The newest migration in ``runs/migrations/versions`` (a test keeps the two equal): a store already there
#: is opened without loading Alembic.
SCHEMA_HEAD = "0012_shared_calls"


class Encoded(str):
    """A value already written as JSON (an event serialised by pydantic): stored as it is."""


def dump_json(value: Any) -> str:
    """JSON columns' writer: pydantic's serialiser, several times faster than :func:`json.dumps` on the
    event data every save writes (NaN and infinities become null, which the standard JSON type cannot hold).
    Its reader is pydantic's parser, likewise (a report parses every event it reads)."""
    return value if isinstance(value, Encoded) else to_json(value).decode()


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


class Database:
    """The engine, its migration and its sessions: what every part of the :class:`~lexicoord.runs.store.Store`
    stands on."""

    def __init__(self, url: str | None = None) -> None:
        raw_url = paths.db_url(url) if url else paths.default_db_url()
        #: Seconds to wait for a store another process holds locked (``LEXICOORD_DB_WAIT``).
        self.wait = lock_wait()
        try:
            self.engine: Engine = create_engine(raw_url, json_serializer=dump_json, json_deserializer=from_json)
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
        from sqlalchemy.orm import Session

        return Session(self.engine, expire_on_commit=False)

    @contextlib.contextmanager
    def writing(self, *, rewrites: bool = False) -> Iterator[Session]:
        """A session in a transaction that writes, committed when the block ends.

        SQLite takes one writer at a time, and a writer that finds the file locked waits in SQLite's busy
        handler, which sleeps in steps of up to 100 ms and may sleep on after the lock is gone. A server writes
        from several threads at once (a study's participants, its rooms' moves, a game being stored), so on
        SQLite the writers of this process queue on a lock here instead, and each starts the moment the one
        before it commits. Other processes still meet SQLite's own lock (``LEXICOORD_DB_WAIT``).

        ``rewrites``: the block reads rows and writes them back changed (what ``FOR UPDATE`` locks on
        PostgreSQL). SQLite ignores ``FOR UPDATE``, and Python's driver begins the transaction only at its first
        write, so another process could commit between the read and the write and have its change overwritten;
        there the database's write lock is taken before the block reads (``BEGIN IMMEDIATE``)."""
        with self._write_lock, self.session() as s, s.begin():
            if rewrites and self.engine.dialect.name == "sqlite":
                s.execute(text("BEGIN IMMEDIATE"))
            yield s

    def close(self) -> None:
        self.engine.dispose()

    def read_only(self) -> Self:
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
        reader = object.__new__(type(self))
        reader.engine = create_engine(url, connect_args=connect_args, json_deserializer=from_json)
        reader.url = self.url
        reader.where, reader.wait = self.where, self.wait
        reader._write_lock = contextlib.nullcontext()  # its writes are refused by the database itself
        watch(reader.engine, self.where, self.wait)
        event.listen(reader.engine, "connect", _read_only_session(self.wait))
        return reader
