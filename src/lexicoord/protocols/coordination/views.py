"""What a player sees and what it answers, built only from the events that player may see."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from lexicoord.core.events import ChoiceEvent, Event, MessageEvent
from lexicoord.protocols.coordination.items import CoordinationItem


class Decision(BaseModel):
    """A player's move: a meaning (``None`` if the move failed) and why; ``failure`` says what went wrong."""

    choice: str | None
    justification: str = ""
    failure: str | None = None
    raw: str | None = None


class PastRound(BaseModel):
    round: int
    decisions: dict[str, Decision]
    clarification: str | None = None


class RoundView(BaseModel):
    """Everything public when a player is asked to move: never a choice of the round being played."""

    sentence: str
    word: str
    options: list[str]
    round: int
    leader: str
    announcement: Decision | None = None
    history: list[PastRound] = Field(default_factory=list)
    #: The leader's clarification made just before this round, if any.
    clarification: str | None = None


def round_view(item: CoordinationItem, leader: str, round_: int, events: Iterable[Event]) -> RoundView:
    """The view of round ``round_`` from the events a seat may see (the rules emit a round's choices
    only once every player has moved, so a round in play shows none of its own choices)."""
    announcement: Decision | None = None
    rounds: dict[int, dict[str, Decision]] = {}
    said: dict[int, str] = {}  # clarifications, by the round they come before
    for e in events:
        if isinstance(e, ChoiceEvent) and e.round is not None:
            decision = Decision(choice=e.choice, justification=e.justification, failure=e.failure, raw=e.raw)
            if getattr(e, "move", None) == "announcement":
                announcement = decision
            elif e.round < round_:
                rounds.setdefault(e.round, {})[e.agent or ""] = decision
        elif e.type == "clarification" and isinstance(e, MessageEvent) and e.content and e.round is not None:
            said[e.round + 1] = e.content
    history = [PastRound(round=r, decisions=d, clarification=said.get(r)) for r, d in sorted(rounds.items())]
    return RoundView(sentence=item.sentence, word=item.word, options=list(item.options), round=round_,
                     leader=leader, announcement=announcement, history=history, clarification=said.get(round_))
