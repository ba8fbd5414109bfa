"""Werewolf's record: every role, speech, action, result and death as an event with its audience.

Audiences: a role is its holder's (a wolf's also names the other wolves); the wolves' channel and their kill
votes are the wolves'; the guard's, the witch's and the seer's actions and results are their own; speeches in
the day, votes, deaths and the end are everyone's; what really happened at night (who was attacked, guarded,
saved, poisoned) is the moderator's, seen by no seat and read only by the analysis.
"""

from __future__ import annotations

from pydantic import Field

from lexicoord.core.audience import Audience
from lexicoord.core.events import Event, event_type

#: The moderator's events: no seat may see them (an empty list of names).
MODERATOR = Audience.only()


@event_type
class RoleEvent(Event):
    type: str = "ww_role"
    role: str
    #: For a wolf: every wolf of the game, itself included.
    wolves: list[str] = Field(default_factory=list)

    def line(self) -> str:
        mates = f" (the wolves: {', '.join(self.wolves)})" if self.wolves else ""
        return f"is the {self.role}{mates}"


@event_type
class SpeechEvent(Event):
    """A turn of talk: in the day (everyone hears it) or in the wolves' night channel."""

    type: str = "ww_speech"
    channel: str
    text: str
    #: The raw reply when it could not be read (the turn is then silent).
    failure: str | None = None

    def line(self) -> str:
        where = "to the wolves" if self.channel == "wolves" else "to everyone"
        return f"says {where}: {' '.join(self.text.split())[:300]}" if not self.failure else f"is silent ({self.failure})"


@event_type
class ActionEvent(Event):
    """A structured move: ``kill_vote``, ``protect``, ``save``, ``poison``, ``check``, ``vote``, ``bid``.

    ``target`` is ``None`` for an abstention; an invalid reply is an abstention with ``failure`` and ``raw``.
    """

    type: str = "ww_action"
    action: str
    target: str | None = None
    failure: str | None = None
    raw: str | None = None

    def line(self) -> str:
        said = self.target if self.target is not None else "nobody (abstains)"
        return f"{self.action.replace('_', ' ')}: {said}" + (f" [invalid: {self.failure}]" if self.failure else "")


@event_type
class VictimEvent(Event):
    """The witch learns who the wolves attacked (while she holds the antidote)."""

    type: str = "ww_victim"
    victim: str | None

    def line(self) -> str:
        return f"learns the wolves attacked {self.victim or 'nobody'}"


@event_type
class CheckResultEvent(Event):
    """The seer's result: whether the target is a wolf, or the exact role by the rule flag."""

    type: str = "ww_check"
    target: str
    wolf: bool
    role: str | None = None

    def line(self) -> str:
        found = self.role or ("a wolf" if self.wolf else "not a wolf")
        return f"learns that {self.target} is {found}"


@event_type
class NightEvent(Event):
    """What really happened at night, for the record only (the moderator's)."""

    type: str = "ww_night"
    attacked: str | None = None
    protected: str | None = None
    saved: bool = False
    poisoned: str | None = None
    deaths: list[str] = Field(default_factory=list)

    def line(self) -> str:
        return (f"night: attacked {self.attacked}, guarded {self.protected}, saved {self.saved}, "
                f"poisoned {self.poisoned}; deaths {', '.join(self.deaths) or 'none'}")


@event_type
class DeathEvent(Event):
    type: str = "ww_death"
    player: str
    #: ``night`` or ``exile`` (the night's cause stays hidden).
    cause: str
    role: str | None = None

    def line(self) -> str:
        role = f" (the {self.role})" if self.role else ""
        return f"{self.player}{role} {'died in the night' if self.cause == 'night' else 'is exiled'}"


@event_type
class ExileEvent(Event):
    """The day's vote, counted: every vote, the result and whether it was a tie."""

    type: str = "ww_exile"
    tally: dict[str, int] = Field(default_factory=dict)
    exiled: str | None = None
    tie: bool = False
    rule: str = ""

    def line(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.tally.items(), key=lambda kv: -kv[1])) or "no votes"
        result = f"{self.exiled} is exiled" if self.exiled else "nobody is exiled" + (" (tie)" if self.tie else "")
        return f"votes: {counts}; {result}"


@event_type
class GameOverEvent(Event):
    """The end, for everyone: the winner and every role."""

    type: str = "ww_over"
    winner: str
    roles: dict[str, str] = Field(default_factory=dict)

    def line(self) -> str:
        return f"game over: {self.winner}"
