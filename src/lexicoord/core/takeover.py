"""The event that says a model took a person's seat over, and from when.

A study replaces a participant who left (gone past a grace period, or idle past a move's limit) with a
model for the rest of the game, so the others can finish it. The game's record keeps who took over, why,
and after how many of the person's requests, so an analysis can keep such games or drop them: every move
of that seat before the event is the person's, every move after it the model's.
"""

from __future__ import annotations

from typing import Literal

from lexicoord.core.events import Event, event_type


@event_type
class SeatTakenOver(Event):
    type: Literal["seat_taken_over"] = "seat_taken_over"
    #: The model now playing the seat.
    by: str
    #: ``disconnected`` (gone past the grace period), ``idle`` (let a move time out), or the operator's words.
    reason: str
    #: The person's requests before the model took over (the one being asked then is the model's).
    after_moves: int

    def line(self) -> str | None:
        return f"{self.agent}'s seat is played by {self.by} from here on ({self.reason})"
