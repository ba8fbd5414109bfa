"""The coordination game's moves in a live room, validated like every message (see :mod:`lexicoord.web.messages`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lexicoord.protocols.coordination.manual import MAX_GLOSS, MAX_SENTENCE, MAX_WORD
from lexicoord.protocols.coordination.moves import MAX_JUSTIFICATION, MAX_STATEMENT
from lexicoord.web.messages import Inbound


class Choose(Inbound):
    """A choice for the request you were given (the announcement in round 0, then every round)."""

    type: Literal["choose"]
    round: int = Field(ge=0, le=100)
    choice: str = Field(min_length=1, max_length=MAX_GLOSS * 2)
    #: The frame's bound only: the request's schema (MAX_JUSTIFICATION, as for models) decides, as ``bad_answer``.
    justification: str = Field(default="", max_length=MAX_JUSTIFICATION * 8)


class Clarify(Inbound):
    """The leader's clarifying statement between rounds; empty for none."""

    type: Literal["clarify"]
    round: int = Field(ge=0, le=100)
    statement: str = Field(default="", max_length=MAX_STATEMENT * 4)


class ManualSentence(Inbound):
    type: Literal["manual_sentence"]
    sentence: str = Field(min_length=3, max_length=MAX_SENTENCE)
    word: str = Field(min_length=1, max_length=MAX_WORD)


class ManualConfirm(Inbound):
    type: Literal["manual_confirm"]
    options: list[Annotated[str, Field(min_length=1, max_length=MAX_GLOSS)]] = Field(min_length=2, max_length=5)


class Propose(Inbound):
    """A person's proposed meaning in manual mode (checked against the schema a model's proposal meets)."""

    type: Literal["propose"]
    meaning: str = Field(min_length=1, max_length=MAX_GLOSS * 2)
    justification: str = Field(default="", max_length=MAX_JUSTIFICATION * 8)


class CloseProposals(Inbound):
    """The leader stops waiting for people who have not proposed."""

    type: Literal["close_proposals"]


MESSAGES: tuple[type[Inbound], ...] = (Choose, Clarify, ManualSentence, ManualConfirm, Propose, CloseProposals)
