"""What everyone in a room may see of the game being played, built from the game's own events.

Choices of a round become visible only when the round closes: the rules emit
them after every player has moved, and this view shows a round's choices only
on the ``round_closed`` event. Until then it knows only who has moved.
"""

from __future__ import annotations

import time
from typing import Any

from lexicoord.core.audience import Viewer, can_see
from lexicoord.core.events import ChoiceEvent, Event, OutcomeEvent, RoundClosedEvent
from lexicoord.tasks.ambiguous import word_span

#: What the page shows of every game: only events everyone may see.
SPECTATOR = Viewer()


class GameView:
    def __init__(self, number: int, item: dict[str, Any], players: list[dict[str, Any]]) -> None:
        self.number = number
        span = word_span(item["sentence"], item["word"]) or (0, 0)
        self.item = {"id": item.get("id"), "sentence": item["sentence"], "word": item["word"],
                     "options": list(item["options"]), "span": list(span)}
        #: Everyone at the table, in line-up order: name, kind (human / llm), model.
        self.players = players
        self.stage = "announce"
        self.round = 0
        self.announcement: dict[str, Any] | None = None
        self.rounds: list[dict[str, Any]] = []
        self.clarifications: dict[int, str] = {}
        self.status: dict[str, dict[str, Any]] = {}
        self.outcome: dict[str, Any] | None = None
        self.error: str | None = None
        self._pending: dict[str, dict[str, Any]] = {}

    # from the players, as they move -------------------------------------------------------------
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None = None) -> None:
        if kind in ("choose", "announce") and round_ is not None and round_ != self.round:
            self.round = round_
            self.status = {}
        self.stage = {"choose": "choose", "announce": "announce", "clarify": "clarify"}.get(kind, self.stage)
        self.status[name] = {"state": "thinking", "deadline": deadline, "since": time.time()}

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        self.status[name] = {"state": "failed" if failure else ("chosen" if kind != "clarify" else "spoke"),
                             "detail": failure}

    # from the rules, as events ------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        if not can_see(SPECTATOR, event.audience):  # the page shows everyone the public events only
            return
        if isinstance(event, ChoiceEvent):
            entry = {"choice": event.choice, "justification": event.justification, "failure": event.failure}
            if getattr(event, "move", None) == "announcement":
                self.announcement = {"agent": event.agent, **entry}
            else:
                self._pending[event.agent or ""] = entry
        elif event.type == "disjunction":  # t1 is the announced meaning: the options as the game plays them
            self.item["options"] = list(getattr(event, "options", self.item["options"]))
        elif isinstance(event, RoundClosedEvent):
            self.rounds.append({
                "round": event.round, "clarification": self.clarifications.get((event.round or 1) - 1),
                "decisions": self._pending, "converged": bool(event.summary.get("converged")),
            })
            self._pending = {}
            self.stage = "reveal"
        elif event.type == "clarification":
            content = getattr(event, "content", "")
            if content:
                self.clarifications[event.round or 0] = content
        elif isinstance(event, OutcomeEvent):
            self.outcome = event.outcome
            self.stage = "over"
        elif event.type == "error":
            self.error = getattr(event, "message", "the game failed")
            self.stage = "over"

    def public(self) -> dict[str, Any]:
        return {
            "number": self.number, "item": self.item, "players": self.players, "stage": self.stage,
            "round": self.round, "announcement": self.announcement, "rounds": self.rounds,
            "clarification": self.clarifications.get(self.round - 1) if self.stage != "over" else None,
            "status": self.status, "outcome": self.outcome, "error": self.error,
        }
