"""A study's room reads only its own games from the store.

Every group of a study plays in its own room, and all of them store their games in the study's one run
(so one report covers the study). A room's statistics and history are read from its run, so without this
a group would see other groups' sentences, choices and the justifications their participants wrote. A
managed room therefore reads the run through :class:`OwnGames`: the episodes whose keys its own games had
(:attr:`lexicoord.web.room_state.Managed.games`), nothing else. The rooms' adapters are unchanged: they read the
store as always.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lexicoord.core.events import Event
    from lexicoord.runs.records import EpisodeRecord
    from lexicoord.runs.store import Store
    from lexicoord.web.services import Services


class OwnGames:
    """The store as one managed room reads it: only the episodes with one of ``keys``."""

    def __init__(self, store: Store, keys: list[str]) -> None:
        self._store = store
        self._keys = keys  # the room's own list, growing as its games begin

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def episodes(self, run_id: str) -> list[EpisodeRecord]:
        return self._store.episodes(run_id, keys=list(self._keys))

    def iter_run_events(self, run_id: str, page: int = 200,
                        types: Sequence[str] | None = None) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
        # Asked of the store by key: a new group's room reads nothing, not every other group's games.
        return self._store.iter_run_events(run_id, page, types, keys=list(self._keys))


class ServicesView:
    """The server's services with the store read through ``store`` (everything else is the server's own)."""

    def __init__(self, services: Services, store: OwnGames) -> None:
        #: The server's own services, whole.
        self.server = services
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.server, name)
