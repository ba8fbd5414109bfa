"""What everyone in a room may see of the game being played, built from the game's own events.

Choices of a round become visible only when the round closes: the rules emit
them after every player has moved, and this view shows a round's choices only
on the ``round_closed`` event. Until then it knows only who has moved.
"""

from __future__ import annotations

import time
from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from lexicoord.core.audience import Viewer, can_see
from lexicoord.core.events import ChoiceEvent, Event, OutcomeEvent, RoundClosedEvent
from lexicoord.protocols.coordination.items import CoordinationItem
from lexicoord.protocols.coordination.rules import CoordinationOutcome
from lexicoord.tasks.ambiguous import word_span
from lexicoord.web.frames import Part, SeatSeen

#: What the page shows of every game: only events everyone may see.
SPECTATOR = Viewer()


class TableItem(TypedDict):
    """The sentence on the table: its word and where it stands (``span``), the options as the game plays them.
    A typed dict, not a model: the table updates its options in place when the announcement orders them."""

    id: str | None
    sentence: str
    word: str
    options: list[str]
    span: list[int]


class Move(Part):
    """A player's pick in a round, or its failure (``choice`` is then ``None``)."""

    choice: str | None
    justification: str
    failure: str | None


class Announcement(Part):
    """The leader's announced meaning (round 0), or its failure."""

    agent: str | None
    choice: str | None
    justification: str
    failure: str | None


class Round(Part):
    """A closed round: the clarification it followed, every player's move, whether they agreed."""

    round: int | None
    clarification: str | None
    decisions: dict[str, Move]
    converged: bool


class Thinking(Part):
    """A player asked and not yet answered: since when, and until when they may take."""

    state: Literal["thinking"] = "thinking"
    deadline: float | None
    since: float


class Moved(Part):
    """A player has moved (``chosen``; ``spoke`` for a clarification) or failed to (and why)."""

    state: Literal["chosen", "spoke", "failed"]
    detail: str | None


SeatStatus = Annotated[Thinking | Moved, Field(discriminator="state")]


class Table(Part):
    """What everyone sees of the game on the table."""

    number: int
    item: TableItem
    players: list[SeatSeen]
    stage: str
    round: int
    announcement: Announcement | None
    rounds: list[Round]
    #: The clarification the round under way follows (none once the game is over).
    clarification: str | None
    status: dict[str, SeatStatus]
    outcome: CoordinationOutcome | None
    error: str | None


class GameView:
    def __init__(self, number: int, item: CoordinationItem, players: list[SeatSeen]) -> None:
        self.number = number
        span = word_span(item.sentence, item.word) or (0, 0)
        self.item = TableItem(id=item.id, sentence=item.sentence, word=item.word, options=list(item.options),
                              span=list(span))
        #: Everyone at the table, in line-up order: name, kind (human / llm), model.
        self.players = players
        self.stage = "announce"
        self.round = 0
        self.announcement: Announcement | None = None
        self.rounds: list[Round] = []
        self.clarifications: dict[int, str] = {}
        self.status: dict[str, Thinking | Moved] = {}
        self.outcome: CoordinationOutcome | None = None
        self.error: str | None = None
        self._pending: dict[str, Move] = {}

    # from the players, as they move -------------------------------------------------------------
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None = None) -> None:
        if kind in ("choose", "announce") and round_ is not None and round_ != self.round:
            self.round = round_
            self.status = {}
        self.stage = {"choose": "choose", "announce": "announce", "clarify": "clarify"}.get(kind, self.stage)
        self.status[name] = Thinking(deadline=deadline, since=time.time())

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        self.status[name] = Moved(state="failed" if failure else ("chosen" if kind != "clarify" else "spoke"),
                                  detail=failure)

    # from the rules, as events ------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        if not can_see(SPECTATOR, event.audience):  # the page shows everyone the public events only
            return
        if isinstance(event, ChoiceEvent):
            if getattr(event, "move", None) == "announcement":
                self.announcement = Announcement(agent=event.agent, choice=event.choice,
                                                 justification=event.justification, failure=event.failure)
            else:
                self._pending[event.agent or ""] = Move(choice=event.choice, justification=event.justification,
                                                        failure=event.failure)
        elif event.type == "disjunction":  # t1 is the announced meaning: the options as the game plays them
            self.item["options"] = list(getattr(event, "options", self.item["options"]))
        elif isinstance(event, RoundClosedEvent):
            self.rounds.append(Round(round=event.round, clarification=self.clarifications.get((event.round or 1) - 1),
                                     decisions=self._pending, converged=bool(event.summary.get("converged"))))
            self._pending = {}
            self.stage = "reveal"
        elif event.type == "clarification":
            content = getattr(event, "content", "")
            if content:
                self.clarifications[event.round or 0] = content
        elif isinstance(event, OutcomeEvent):
            self.outcome = CoordinationOutcome.model_validate(event.outcome)
            self.stage = "over"
        elif event.type == "error":
            self.error = getattr(event, "message", "the game failed")
            self.stage = "over"

    def public(self) -> Table:
        return Table(
            number=self.number, item=self.item, players=self.players, stage=self.stage, round=self.round,
            announcement=self.announcement, rounds=self.rounds,
            clarification=self.clarifications.get(self.round - 1) if self.stage != "over" else None,
            status=self.status, outcome=self.outcome, error=self.error,
        )
