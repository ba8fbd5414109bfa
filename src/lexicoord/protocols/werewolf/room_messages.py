"""Werewolf's moves in a live room, validated like every message (see :mod:`lexicoord.web.messages`).

A person answers only the request their own seat holds: ``act`` for a closed choice (a night action, a bid
or the day's vote) and ``speak`` for a turn of talk (the wolves' channel at night, the day's discussion,
last words). Which request that is, and its legal targets, are checked by the adapter against the seat's
pending request, so a message can never act for another seat or out of turn.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lexicoord.web.messages import Inbound

#: The longest speech a person may make: about what a model says in its 160 tokens.
MAX_SPEECH = 600


class Act(Inbound):
    """A closed choice: ``action`` names the request (``kill_vote``, ``protect``, ``save``, ``poison``,
    ``check``, ``bid``, ``vote``), ``target`` one of its options (``abstain`` among them)."""

    type: Literal["act"]
    round: int = Field(ge=0, le=100)
    action: str = Field(min_length=1, max_length=20)
    target: str = Field(min_length=1, max_length=40)


class Speak(Inbound):
    """A turn of talk; empty text is a silent turn."""

    type: Literal["speak"]
    round: int = Field(ge=0, le=100)
    text: str = Field(default="", max_length=MAX_SPEECH)


MESSAGES: tuple[type[Inbound], ...] = (Act, Speak)
