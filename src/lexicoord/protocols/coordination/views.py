"""What a player sees and what it answers: the records passed between the rules and the players."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
    clarification: str | None = None
