"""How the store's rows are written and read back, shared by every concern that touches episodes and events.

Kept apart because the writers (a saved episode, a live game's events) and the readers (reports, the run viewer)
must agree on one encoding: the statements that insert episodes and events, an event's row, and the record an
episode row reads back as. (The statuses an episode row may hold besides ``done`` and ``failed`` are beside its
table, in :mod:`lexicoord.runs.tables`; the JSON its columns hold is the engine's, in
:mod:`lexicoord.runs.store_engine`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import insert

from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store_engine import Encoded
from lexicoord.runs.tables import EPISODES, EVENTS

#: Episodes and events are written by plain statements on their tables (one executemany each), not through the
#: ORM's bulk path, which goes row by row when it hands back ids.
INSERT_EVENTS = insert(EVENTS)
INSERT_EPISODES = insert(EPISODES)

if TYPE_CHECKING:
    from lexicoord.core.events import Event
    from lexicoord.runs.schema import EpisodeRow


def event_row(episode_id: int, e: Event) -> dict[str, Any]:
    return {"episode_id": episode_id, "seq": e.seq, "type": e.type, "agent": e.agent, "round": e.round, "ts": e.ts,
            "data": Encoded(e.model_dump_json())}


def record_of(row: EpisodeRow) -> EpisodeRecord:
    return EpisodeRecord.model_validate({c.name: getattr(row, c.name) for c in EPISODES.columns})
