"""The WebSocket protocol: every message a browser may send, validated before anything reads it.

A message is one JSON object of at most :data:`MAX_MESSAGE` characters with a
``type``; unknown types, unknown fields and over-long text are refused with an
``error`` reply that names the problem. The seat a message acts for comes only
from the token given in ``hello``: no message can name another player.

Server to browser: ``welcome`` (your seat), ``state`` (the room as you may see
it, after every change), ``stats`` (statistics and history, after every game),
``error`` (``code`` and ``message``), ``pong``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

MAX_MESSAGE = 4096
MAX_JUSTIFICATION = 300
MAX_STATEMENT = 400
MAX_OPTION = 80


class Inbound(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=MAX_MESSAGE)


class Hello(Inbound):
    type: Literal["hello"]
    token: str = Field(min_length=8, max_length=64)


class Choose(Inbound):
    """A choice for the request you were given (the announcement in round 0, then every round)."""

    type: Literal["choose"]
    round: int = Field(ge=0, le=100)
    choice: str = Field(min_length=1, max_length=MAX_OPTION * 2)
    justification: str = Field(default="", max_length=MAX_JUSTIFICATION)


class Clarify(Inbound):
    """The leader's clarifying statement between rounds; empty for none."""

    type: Literal["clarify"]
    round: int = Field(ge=0, le=100)
    statement: str = Field(default="", max_length=MAX_STATEMENT)


class Start(Inbound):
    """The leader starts the next game (automatic mode) or opens the sentence form (manual mode)."""

    type: Literal["start"]


class EndGame(Inbound):
    type: Literal["end_game"]


class ManualSentence(Inbound):
    type: Literal["manual_sentence"]
    sentence: str = Field(min_length=3, max_length=400)
    word: str = Field(min_length=1, max_length=40)


class ManualConfirm(Inbound):
    type: Literal["manual_confirm"]
    options: list[Annotated[str, Field(min_length=1, max_length=MAX_OPTION)]] = Field(min_length=2, max_length=5)


class Drop(Inbound):
    """The leader lets a person go: the game goes on without them."""

    type: Literal["drop"]
    name: str = Field(min_length=1, max_length=40)


class HandOver(Inbound):
    """The leader passes the lead to another person in the room."""

    type: Literal["hand_over"]
    name: str = Field(min_length=1, max_length=40)


class TakeLead(Inbound):
    """Anyone may take the lead when the leader has left or been away long enough (see ``Room.lead_after``)."""

    type: Literal["take_lead"]


class Ping(Inbound):
    type: Literal["ping"]


Message = Annotated[
    Hello | Choose | Clarify | Start | EndGame | ManualSentence | ManualConfirm | Drop | HandOver | TakeLead | Ping,
    Field(discriminator="type"),
]
_adapter: TypeAdapter[Message] = TypeAdapter(Message)


class BadMessage(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse(text: str) -> Message:
    """One inbound frame as a typed message, or :class:`BadMessage` saying what is wrong with it."""
    if len(text) > MAX_MESSAGE:
        raise BadMessage("too_large", f"messages are limited to {MAX_MESSAGE} characters")
    try:
        return _adapter.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "message"
        raise BadMessage("bad_message", f"{where}: {first.get('msg', 'invalid')}") from None
