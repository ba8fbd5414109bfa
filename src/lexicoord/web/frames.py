"""Every frame the server sends a browser, typed: the page reads exactly these shapes.

``welcome`` (your seat), ``state`` (the room as you may see it, after every change), ``stats`` (statistics
and history, after every game), ``error`` (``code`` and ``message``), ``pong``. The room's part of ``state``
is typed here; the protocol's part (its phases, its game) is the adapter's view, a :class:`Part` of its own
(:meth:`lexicoord.web.adapters.base.RoomAdapter.view`), merged beside it key for key.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Frame(BaseModel):
    type: str

    def text(self) -> str:
        """The frame as sent (JSON, no ASCII escaping: names and text as people wrote them)."""
        return dumps(self)


class Welcome(Frame):
    type: Literal["welcome"] = "welcome"
    name: str
    leader: bool


class ErrorFrame(Frame):
    type: Literal["error"] = "error"
    code: str
    message: str


class Pong(Frame):
    type: Literal["pong"] = "pong"


class Stats(Frame):
    """The adapter's statistics and history, as its page part draws them."""

    model_config = ConfigDict(extra="allow")
    type: Literal["stats"] = "stats"


class Part(BaseModel):
    """A piece of what an adapter shows: closed, so a key the page does not expect cannot slip into a frame
    (a typo or a stray field fails where the part is built, not in a browser)."""

    model_config = ConfigDict(extra="forbid")


class SeatSeen(Part):
    """One seat at a game's table, as the page lists it: who, a person or a model, and which model."""

    name: str
    kind: str
    model: str | None


class PersonSeen(BaseModel):
    name: str
    connected: bool
    absent: bool
    #: The model now playing this person's seat (a study took it over when they left), for the game in play or
    #: the one just played; None while the seat is the person's, or not at the table. The pages say "now played
    #: by an agent", not "left".
    played_by: str | None = None


class AgentSeen(BaseModel):
    name: str
    model: str


class RoomSeen(BaseModel):
    """What everyone in the room sees: the room's own part typed, the protocol's part (its adapter's view for
    everyone: phase, games, the game on the table ...) beside it."""

    model_config = ConfigDict(extra="allow")
    code: str
    protocol: str
    agents: list[AgentSeen]
    leader: str | None
    people: list[PersonSeen]
    notice: str | None
    #: A study's room: its games start and end on the study's schedule (the page offers no leader's controls).
    managed: bool = False


class YouSeen(BaseModel):
    """What only one person sees: who they are, and the adapter's view for them (their request ...)."""

    model_config = ConfigDict(extra="allow")
    name: str
    leader: bool
    absent: bool


#: ``json.dumps``'s layout and text as written; a model's dump holds no cycle, so none is looked for.
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)


def dumps(model: BaseModel) -> str:
    """One frame's JSON, in the one layout every frame has (``json``'s separators, text as written)."""
    return _ENCODER.encode(model.model_dump(mode="json"))


@lru_cache(maxsize=256)
def _keys(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(model.model_fields)


def merged(own: BaseModel, part: BaseModel) -> str:
    """The JSON object of ``own``'s keys followed by ``part``'s (an adapter's view beside the room's own part),
    each serialised once, as text. A key in both would be sent twice, so it is refused, as building one model
    from both would refuse it."""
    clash = (_keys(type(own)) | set(own.model_extra or ())) & (_keys(type(part)) | set(part.model_extra or ()))
    if clash:
        raise ValueError(f"{type(part).__name__} repeats the room's own keys: {sorted(clash)}")
    head, tail = dumps(own), dumps(part)
    if tail == "{}":
        return head
    return f"{head[:-1]}, {tail[1:]}" if head != "{}" else tail


def state_text(room: str, you: str) -> str:
    """A ``state`` frame from the room's part (serialised once per broadcast) and one person's part."""
    return f'{{"type": "state", "room": {room}, "you": {you}}}'


def stats_of(values: dict[str, Any]) -> Stats:
    return Stats(**values)
