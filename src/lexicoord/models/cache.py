"""A persistent response cache.

Entries are JSON rows in a SQLite file, keyed by a hash of the whole request
(model spec, messages, generation settings, schema) and a format version, so a
change of output format never reads stale entries and nothing is pickled.
Sampling settings are part of the key: to get fresh samples of the same prompt,
vary the ``seed`` (the runner gives each repetition its own). The raw response is stored, not
the parsed one, so a better parser applies to cached replies too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Protocol

from lexicoord.errors import ConfigError
from lexicoord.models.types import ChatMessage, GenerateConfig, ProviderResponse

CACHE_FORMAT = 1
log = logging.getLogger(__name__)


def cache_key(identity: str, messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
    """``identity`` is the provider's :attr:`~lexicoord.models.provider.Provider.cache_identity`."""
    payload = {
        "v": CACHE_FORMAT,
        "model": identity,
        "messages": [m.model_dump() for m in messages],
        "config": config.cache_fields(),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class Cache(Protocol):
    """Where a :class:`~lexicoord.models.model.Model` keeps replies: this module's file, or a run's store
    (:mod:`lexicoord.runs.shared_cache`), which every machine of a run reads."""

    #: Reads cross a network (a model reads them off its event loop); a local file's do not.
    remote: ClassVar[bool]

    def get(self, key: str) -> ProviderResponse | None: ...

    def put(self, key: str, spec: str, response: ProviderResponse) -> None: ...


class ResponseCache:
    """Thread-safe; one connection guarded by a lock (calls are short)."""

    remote: ClassVar[bool] = False

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")  # a cache: the last replies may go with a power cut
            self._conn.execute("PRAGMA busy_timeout=5000")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, created REAL NOT NULL, output TEXT NOT NULL)"
            )
        except (sqlite3.Error, OSError) as exc:
            raise ConfigError(
                f"Cannot use {self.path} as the response cache ({exc}); set LEXICOORD_CACHE_PATH to a "
                "writable file, or LEXICOORD_CACHE=0 to turn the cache off."
            ) from None

    def get(self, key: str) -> ProviderResponse | None:
        """The cached response, or ``None``; a cache that cannot be read now (locked by another process past
        the wait, damaged) is a miss with a warning: the cache saves calls, it never fails one."""
        try:
            with self._lock:
                row = self._conn.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            log.warning("response cache %s not read (%s); the model is asked instead", self.path, exc)
            return None
        if row is None:
            return None
        return ProviderResponse.model_validate_json(row[0])

    def put(self, key: str, spec: str, response: ProviderResponse) -> None:
        """Keep ``response``; one that cannot be written now is not kept, with a warning (the call stands)."""
        try:
            with self._lock:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, model, created, output) VALUES (?, ?, ?, ?)",
                    (key, spec, time.time(), response.model_dump_json()),
                )
        except sqlite3.Error as exc:
            log.warning("response cache %s not written (%s); the reply is used, not kept", self.path, exc)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self) -> int:
        with self._lock:
            return self._conn.execute("DELETE FROM responses").rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()
