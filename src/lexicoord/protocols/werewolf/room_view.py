"""What one person sees of a Werewolf game in a room: a projection of the game's events, built per viewer.

Visibility is never decided here: the adapter hands in the events a viewer may see, taken from the game's
record through :func:`lexicoord.core.audience.visible` (a living seat's through
``room.events_for(room.seat_viewer(...))``, the seat's own audience; anyone else's as a spectator's, public events only; everyone's after the game ends).
This module only turns those events into entries a page can show, and keeps the one thing the record does
not hold: who is being asked right now. A move in progress is shown to the audience its event will have
(the wolves' talk and kill votes to the wolves, a night role's action or a bid to its player alone, the
day's talk and vote to everyone), checked with the same :func:`~lexicoord.core.audience.can_see`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lexicoord.core.audience import EVERYONE, Audience, Viewer, can_see
from lexicoord.core.events import Event
from lexicoord.lexicon.events import TermsSharedEvent
from lexicoord.protocols.werewolf.events import (
    ActionEvent,
    CheckResultEvent,
    DeathEvent,
    ExileEvent,
    GameOverEvent,
    NightEvent,
    RoleEvent,
    SpeechEvent,
    VictimEvent,
)
from lexicoord.web.frames import Part, SeatSeen

#: Everyone in the room who is not a living seat: public events only.
SPECTATOR = Viewer()
#: After the game: every event, the moderator's included.
EVERYTHING = Viewer(omniscient=True)
WOLVES = "wolves"


def to_whom(audience: Audience) -> str:
    """Who an entry was for, in words (``nobody`` is the moderator's record)."""
    if audience.kind == "agents" and not audience.agents:
        return "moderator"
    return audience.describe()


def when(e: Event) -> str:
    phase = e.phase or ""
    if phase in ("night", "dawn"):
        return f"Night {e.round}"
    return f"Day {e.round}" if e.round else "Start"


# ------------------------------------------------------------------ what the page is sent (room.js reads it)
class Entry(Part):
    """One line of the game's log: when, to whom (``public`` when to everyone), and what (``t`` says which)."""

    when: str
    to: str
    public: bool


class RoleShown(Entry):
    t: Literal["role"] = "role"
    who: str | None
    role: str
    wolves: list[str]


class SpeechShown(Entry):
    t: Literal["speech"] = "speech"
    who: str | None
    channel: str
    text: str
    failure: str | None


class ActionShown(Entry):
    t: Literal["action"] = "action"
    who: str | None
    action: str
    target: str | None
    failure: str | None


class VictimShown(Entry):
    t: Literal["victim"] = "victim"
    who: str | None
    victim: str | None


class CheckShown(Entry):
    t: Literal["check"] = "check"
    who: str | None
    target: str
    wolf: bool
    role: str | None


class NightShown(Entry):
    t: Literal["night"] = "night"
    text: str


class DeathShown(Entry):
    t: Literal["death"] = "death"
    who: str
    cause: str
    role: str | None


class ExileShown(Entry):
    t: Literal["exile"] = "exile"
    tally: dict[str, int]
    exiled: str | None
    tie: bool


class OverShown(Entry):
    t: Literal["over"] = "over"
    winner: str
    roles: dict[str, str]


#: An entry of the log, of whichever kind ``t`` names.
Shown = (RoleShown | SpeechShown | ActionShown | VictimShown | CheckShown | NightShown | DeathShown | ExileShown
         | OverShown)
LogEntry = Annotated[Shown, Field(discriminator="t")]


class Term(Part):
    """A coined term as one of its pools holds it."""

    term: str
    definition: str | None
    pool: str
    coiner: str | None


class Moving(Part):
    """A move in progress, shown to the audience of the event it will make."""

    who: str
    kind: str
    deadline: float | None


class Projection(Part):
    """The game as one person may see it; ``viewer`` says as whom (their seat, a spectator, or everyone once the
    game's end is announced)."""

    log: list[LogEntry]
    pools: list[Term]
    moving: list[Moving]
    viewer: Literal["seat", "spectator", "everyone"]


class Dead(Part):
    """A death as it was announced (the role only if the rules reveal it)."""

    cause: str
    role: str | None
    day: int | None


class Table(Part):
    """What everyone sees: the table, who has died (and how, as announced), the stage and day, the winner."""

    number: int
    players: list[SeatSeen]
    dead: dict[str, Dead]
    stage: str | None
    day: int | None
    winner: str | None


def entry(e: Event) -> Shown | None:
    """One event as the page shows it, or ``None`` for the record's bookkeeping (model calls, term uses)."""
    base = {"when": when(e), "to": to_whom(e.audience), "public": e.audience.public}
    if isinstance(e, RoleEvent):
        return RoleShown(**base, who=e.agent, role=e.role, wolves=e.wolves)
    if isinstance(e, SpeechEvent):
        return SpeechShown(**base, who=e.agent, channel=e.channel, text=e.text, failure=e.failure)
    if isinstance(e, ActionEvent):
        return ActionShown(**base, who=e.agent, action=e.action, target=e.target, failure=e.failure)
    if isinstance(e, VictimEvent):
        return VictimShown(**base, who=e.agent, victim=e.victim)
    if isinstance(e, CheckResultEvent):
        return CheckShown(**base, who=e.agent, target=e.target, wolf=e.wolf, role=e.role)
    if isinstance(e, NightEvent):
        return NightShown(**base, text=e.line())
    if isinstance(e, DeathEvent):
        return DeathShown(**base, who=e.player, cause=e.cause, role=e.role)
    if isinstance(e, ExileEvent):
        return ExileShown(**base, tally=e.tally, exiled=e.exiled, tie=e.tie)
    if isinstance(e, GameOverEvent):
        return OverShown(**base, winner=e.winner, roles=e.roles)
    return None


def move_audience(name: str, kind: str, phase: str | None) -> Audience:
    """The audience of the event a move in progress will make (see the module's docstring)."""
    if kind == "kill_vote" or (kind == "speak" and phase == "night"):
        return Audience.group(WOLVES)
    if kind in ("speak", "vote"):
        return EVERYONE
    return Audience.only(name)


class WerewolfView:
    """One game in a room: its players, the moves in progress, and the entries of its events (cached,
    since every broadcast projects the same events for every viewer)."""

    def __init__(self, number: int, players: list[SeatSeen]) -> None:
        self.number = number
        #: Everyone at the table, in line-up order: name, kind (human / llm), model.
        self.players = players
        #: Moves in progress: who, what, until when, and to whom that is shown.
        self.moving: dict[str, tuple[Audience, Moving]] = {}
        #: Public facts, from public events only.
        self.dead: dict[str, Dead] = {}
        self.winner: str | None = None
        self._entries: dict[int, Shown | None] = {}

    # from the players and the rules, as the game goes -------------------------------------------
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None) -> None:
        self.moving[name] = (move_audience(name, kind, phase), Moving(who=name, kind=kind, deadline=deadline))

    def move_done(self, name: str) -> None:
        self.moving.pop(name, None)

    def on_event(self, event: Event) -> None:
        if not can_see(SPECTATOR, event.audience):
            return
        if isinstance(event, DeathEvent):
            self.dead[event.player] = Dead(cause=event.cause, role=event.role, day=event.round)
        elif isinstance(event, GameOverEvent):
            self.winner = event.winner
            self.moving.clear()

    # views --------------------------------------------------------------------------------------
    def public(self, stage: str | None, day: int | None) -> Table:
        """What everyone sees: the table, who has died (and how, as announced), the stage, the winner."""
        return Table(number=self.number, players=self.players, dead=self.dead, stage=stage, day=day,
                     winner=self.winner)

    def project(self, events: list[Event], viewer: Viewer,
                seen_as: Literal["seat", "spectator", "everyone"]) -> Projection:
        """The game as ``viewer`` sees it, from ``events``: the events that viewer may see, and no others;
        ``seen_as`` tells the page whose view it is."""
        log: list[Shown] = []
        pools: dict[str, Term] = {}
        for e in events:
            key = id(e)
            if key not in self._entries:
                self._entries[key] = entry(e)
            shown = self._entries[key]
            if shown is not None:
                log.append(shown)
            elif isinstance(e, TermsSharedEvent):
                for item in e.snapshot:
                    term = item.get("term")
                    if isinstance(term, str) and term in e.terms:
                        pools[term] = Term(term=term, definition=_text(item.get("definition")),
                                           pool=to_whom(e.audience), coiner=_coiner(item))
        moving = [m for audience, m in self.moving.values() if can_see(viewer, audience)]
        return Projection(log=log, pools=list(pools.values()), moving=moving, viewer=seen_as)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _coiner(item: dict[str, object]) -> str | None:
    provenance = item.get("provenance")
    return _text(provenance.get("agent")) if isinstance(provenance, dict) else None
