"""The response cache of a store on a server: one for every machine of a run.

A run shared by machines keeps one record of what was done (the store), and with this one record of what each
model said: a machine that plays an episode again (another's claim expired, a job resumed after preemption)
reuses the replies the first kept instead of paying for them twice. Entries are the same as the local file's
(:mod:`lexicoord.models.cache`): keyed by the request's hash, the raw reply as JSON. A SQLite store keeps the
local file, which is on the same machine already.
"""

from __future__ import annotations

import logging
import time
from typing import ClassVar

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from lexicoord.models.types import ProviderResponse
from lexicoord.runs.schema import ResponseRow
from lexicoord.runs.store import Store

log = logging.getLogger(__name__)


def shares_cache(store: Store) -> bool:
    """Whether a run on ``store`` keeps its replies there (a server every machine reaches) rather than in a file."""
    return store.engine.dialect.name == "postgresql"


class StoreCache:
    """A :class:`~lexicoord.models.cache.Cache` in the store's ``responses`` table."""

    remote: ClassVar[bool] = True

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> ProviderResponse | None:
        """The kept reply, or ``None``; a store that cannot be read now is a miss with a warning (the cache saves
        calls, it never fails one)."""
        try:
            with self.store.session() as s:
                output = s.scalar(select(ResponseRow.output).where(ResponseRow.key == key))
        except DBAPIError as exc:
            log.warning("response cache in %s not read (%s); the model is asked instead", self.store.where, exc.orig)
            return None
        return None if output is None else ProviderResponse.model_validate_json(output)

    def put(self, key: str, spec: str, response: ProviderResponse) -> None:
        """Keep ``response``; two machines keeping the same request's reply at once keep the first."""
        row = {"key": key, "model": spec, "created_at": time.time(), "output": response.model_dump_json()}
        try:
            with self.store.writing() as s:
                dialect = postgresql if self.store.engine.dialect.name == "postgresql" else sqlite
                s.execute(dialect.insert(ResponseRow).values(row).on_conflict_do_nothing())
        except DBAPIError as exc:
            log.warning("response cache in %s not written (%s); the reply is used, not kept", self.store.where,
                        exc.orig)

    def __len__(self) -> int:
        with self.store.session() as s:
            return int(s.scalar(select(func.count()).select_from(ResponseRow)) or 0)
