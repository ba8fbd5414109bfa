"""The WebSocket protocol: every message a browser may send, validated before anything reads it.

A message is one JSON object of at most :data:`MAX_MESSAGE` characters with a
``type``; unknown types, unknown fields and over-long text are refused with an
``error`` reply that names the problem. The seat a message acts for comes only
from the token given in ``hello``: no message can name another player. The
messages here are every room's; a protocol's room adapter adds its own moves
(:attr:`lexicoord.web.adapters.base.RoomAdapter.messages`), parsed the same way.

What the server sends back is typed in :mod:`lexicoord.web.frames`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

MAX_MESSAGE = 4096


class Inbound(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=MAX_MESSAGE)


class Hello(Inbound):
    type: Literal["hello"]
    token: str = Field(min_length=8, max_length=64)


class Start(Inbound):
    """The leader starts the next game (what that means is the protocol's)."""

    type: Literal["start"]


class EndGame(Inbound):
    type: Literal["end_game"]


class Drop(Inbound):
    """The leader lets a person go: the game goes on without them."""

    type: Literal["drop"]
    name: str = Field(min_length=1, max_length=40)


class HandOver(Inbound):
    """The leader passes the lead to another person in the room."""

    type: Literal["hand_over"]
    name: str = Field(min_length=1, max_length=40)


class TakeLead(Inbound):
    """Anyone may take the lead when the leader has left or been away long enough (see ``People.lead_after``)."""

    type: Literal["take_lead"]


class Ping(Inbound):
    type: Literal["ping"]


ROOM_MESSAGES: tuple[type[Inbound], ...] = (Hello, Start, EndGame, Drop, HandOver, TakeLead, Ping)


class Restarted(Inbound):
    """Not a browser's: the room tells its adapter it came back after a restart in a phase of the adapter's own
    (never parsed from a frame, since it is in no table :func:`parse` reads)."""

    type: Literal["restarted"] = "restarted"


class BadMessage(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@lru_cache(maxsize=16)
def _adapter(extra: tuple[type[Inbound], ...]) -> TypeAdapter[Any]:
    members: tuple[Any, ...] = (*ROOM_MESSAGES, *extra)
    union: Any = Union.__getitem__(members)  # a union built at run time from the room's and the adapter's types
    return TypeAdapter(Annotated[union, Field(discriminator="type")])


def parse(text: str, extra: tuple[type[Inbound], ...] = ()) -> Inbound:
    """One inbound frame as a typed message (the room's or ``extra``), or :class:`BadMessage` saying what is wrong."""
    if len(text) > MAX_MESSAGE:
        raise BadMessage("too_large", f"messages are limited to {MAX_MESSAGE} characters")
    try:
        msg: Inbound = _adapter(extra).validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "message"
        raise BadMessage("bad_message", f"{where}: {first.get('msg', 'invalid')}") from None
    return msg
