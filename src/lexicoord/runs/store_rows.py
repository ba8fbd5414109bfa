"""How the store's rows are written and read back, shared by every concern that touches episodes and events.

Kept apart because the writers (a saved episode, a live game's events) and the readers (reports, the run viewer)
must agree on one encoding: the statuses an episode row may hold besides ``done`` and ``failed``, the JSON that
goes into its columns, the statement that inserts events and the record an episode row reads back as.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic_core import to_json
from sqlalchemy import Table, insert

from lexicoord.core.events import Event
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.schema import ClaimRow, EpisodeRow, EventRow, RunRow

#: The status of a live room's game still being played (an ended episode is ``done`` or ``failed``).
PLAYING = "playing"
#: The status of a second save of a finished episode whose content differs from the first's: kept under its own
#: key (``KEY~2`` ...) beside the first, which stands, and left out of reports (which say how many there are).
CONFLICT = "conflict"


class Encoded(str):
    """A value already written as JSON (an event serialised by pydantic): stored as it is."""


def dump_json(value: Any) -> str:
    """JSON columns' writer: pydantic's serialiser, several times faster than :func:`json.dumps` on the
    event data every save writes (NaN and infinities become null, which the standard JSON type cannot hold).
    Its reader is pydantic's parser, likewise (a report parses every event it reads)."""
    return value if isinstance(value, Encoded) else to_json(value).decode()


#: Episodes and events are written by plain statements on their tables (one executemany each), not through the
#: ORM's bulk path, which goes row by row when it hands back ids.
INSERT_EVENTS = insert(cast(Table, EventRow.__table__))
INSERT_EPISODES = insert(cast(Table, EpisodeRow.__table__))
#: The same tables for the statements a live room sends many times a second (the ORM's compile path for an
#: UPDATE or SELECT costs several times the statement itself).
EPISODES = cast(Table, EpisodeRow.__table__)
RUNS = cast(Table, RunRow.__table__)
#: And for the deletes of a save, which no loaded object needs to follow.
CLAIMS = cast(Table, ClaimRow.__table__)
EVENTS = cast(Table, EventRow.__table__)


def event_row(episode_id: int, e: Event) -> dict[str, Any]:
    return {"episode_id": episode_id, "seq": e.seq, "type": e.type, "agent": e.agent, "round": e.round, "ts": e.ts,
            "data": Encoded(e.model_dump_json())}


def record_of(row: EpisodeRow) -> EpisodeRecord:
    return EpisodeRecord.model_validate({c.name: getattr(row, c.name) for c in EpisodeRow.__table__.columns})
