"""What to tell a person whose store cannot be used: one sentence naming the file and what to do.

A database error reaches the user from anywhere a command touches the store (opening it, listing runs, saving
an episode), long after the store was opened. So each engine marks every error it raises with the store it
came from (:func:`watch`), and the command line turns a marked error into a sentence (:func:`sentence`): a
damaged file, a file or folder that cannot be written, a store another process holds locked, a full disk.
The driver's own words are kept in brackets, so nothing is hidden from someone who knows SQLite.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from lexicoord.errors import ConfigError

#: Seconds a command waits for a store another process holds locked before it gives up (``LEXICOORD_DB_WAIT``).
DEFAULT_WAIT = 30.0


def lock_wait() -> float:
    """How long to wait on a locked store: ``$LEXICOORD_DB_WAIT`` seconds, 30 by default."""
    raw = os.environ.get("LEXICOORD_DB_WAIT")
    if raw is None or not raw.strip():
        return DEFAULT_WAIT
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"LEXICOORD_DB_WAIT must be a number of seconds, not {raw!r}.") from None
    if not 0 <= value <= 86400:
        raise ConfigError(f"LEXICOORD_DB_WAIT must be between 0 and 86400 seconds, not {raw!r}.")
    return value


def store_name(url: str, database: str | None, sqlite: bool) -> str:
    """How a sentence names a store: a SQLite store by its file, any other by its URL (password hidden)."""
    return str(Path(database)) if sqlite and database and database != ":memory:" else url


def reason_of(exc: BaseException) -> str:
    """The driver's message on one line (drivers' messages may span several)."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    return " ".join(str(orig).split()) or type(orig).__name__


def explain(reason: str, where: str, wait: float | None = None) -> str:
    """One sentence for a store error: what is wrong with the store named ``where``, and what to do."""
    said = reason.rstrip(".")
    low = said.lower()
    if "file is not a database" in low or "malformed" in low or "not a database" in low:
        return (f"The store {where} is damaged or is not a lexicoord store ({said}): give another file with --db, "
                f"or rescue what is left with sqlite3 {where} .recover | sqlite3 recovered.db.")
    if "readonly" in low or "read-only" in low or "read only" in low:
        return (f"The store {where} cannot be written ({said}): make the file and its folder writable (SQLite "
                f"writes -wal and -shm files beside it), or copy it to a writable folder and give that copy with --db.")
    if "locked" in low or "busy" in low:
        waited = f" for {wait:g} s" if wait is not None else ""
        return (f"The store {where} is locked by another process, waited{waited} ({said}): let that process finish or "
                f"stop it and run the command again, or set LEXICOORD_DB_WAIT to wait longer.")
    if "disk is full" in low or "no space" in low:
        return f"The disk holding the store {where} is full ({said}): free some space and run the command again."
    if "unable to open" in low:
        return (f"Cannot open the store {where} ({said}): check that its folder exists and that you may read and "
                "write there, or give another file with --db.")
    if "too big" in low or "toobig" in low:
        return (f"A record was too big for the store {where} ({said}); nothing of it was saved, and the rest of "
                "the store is as it was.")
    return f"The store {where} refused the command ({said}); check it, or give another one with --db."


def watch(engine: Engine, where: str, wait: float) -> None:
    """Mark every error ``engine`` raises with the store's name and lock wait, for :func:`sentence` to find."""

    def mark(context: Any) -> None:
        raised = context.sqlalchemy_exception
        if raised is not None:
            raised.store = where
            raised.store_wait = wait

    event.listen(engine, "handle_error", mark)


def sentence(exc: DBAPIError) -> str:
    """The sentence for a database error raised through a store's engine (or a plain one without a name)."""
    where = getattr(exc, "store", None) or "given by --db or LEXICOORD_DB"
    return explain(reason_of(exc), where, getattr(exc, "store_wait", None))


class StoreError(ConfigError):
    """A store that cannot be opened or used as it is; the message says which and what to do."""
