"""What one person sees of a Werewolf game in a room: a projection of the game's events, built per viewer.

Visibility is never decided here: the adapter hands in the events a viewer may see, taken from the game's
record through :func:`lexicoord.core.audience.visible` (a living seat's through ``room.visible_to``, the
seat's own audience; anyone else's as a spectator's, public events only; everyone's after the game ends).
This module only turns those events into entries a page can show, and keeps the one thing the record does
not hold: who is being asked right now. A move in progress is shown to the audience its event will have
(the wolves' talk and kill votes to the wolves, a night role's action or a bid to its player alone, the
day's talk and vote to everyone), checked with the same :func:`~lexicoord.core.audience.can_see`.
"""

from __future__ import annotations

from typing import Any

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


def entry(e: Event) -> dict[str, Any] | None:
    """One event as the page shows it, or ``None`` for the record's bookkeeping (model calls, term uses)."""
    base: dict[str, Any] = {"when": when(e), "to": to_whom(e.audience), "public": e.audience.public}
    if isinstance(e, RoleEvent):
        return {**base, "t": "role", "who": e.agent, "role": e.role, "wolves": e.wolves}
    if isinstance(e, SpeechEvent):
        return {**base, "t": "speech", "who": e.agent, "channel": e.channel, "text": e.text, "failure": e.failure}
    if isinstance(e, ActionEvent):
        return {**base, "t": "action", "who": e.agent, "action": e.action, "target": e.target, "failure": e.failure}
    if isinstance(e, VictimEvent):
        return {**base, "t": "victim", "who": e.agent, "victim": e.victim}
    if isinstance(e, CheckResultEvent):
        return {**base, "t": "check", "who": e.agent, "target": e.target, "wolf": e.wolf, "role": e.role}
    if isinstance(e, NightEvent):
        return {**base, "t": "night", "text": e.line()}
    if isinstance(e, DeathEvent):
        return {**base, "t": "death", "who": e.player, "cause": e.cause, "role": e.role}
    if isinstance(e, ExileEvent):
        return {**base, "t": "exile", "tally": e.tally, "exiled": e.exiled, "tie": e.tie}
    if isinstance(e, GameOverEvent):
        return {**base, "t": "over", "winner": e.winner, "roles": e.roles}
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

    def __init__(self, number: int, players: list[dict[str, Any]]) -> None:
        self.number = number
        #: Everyone at the table, in line-up order: name, kind (human / llm), model.
        self.players = players
        #: Moves in progress: who, what, until when, and to whom that is shown.
        self.moving: dict[str, tuple[Audience, dict[str, Any]]] = {}
        #: Public facts, from public events only.
        self.dead: dict[str, dict[str, Any]] = {}
        self.winner: str | None = None
        self._entries: dict[int, dict[str, Any] | None] = {}

    # from the players and the rules, as the game goes -------------------------------------------
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None) -> None:
        self.moving[name] = (move_audience(name, kind, phase), {"who": name, "kind": kind, "deadline": deadline})

    def move_done(self, name: str) -> None:
        self.moving.pop(name, None)

    def on_event(self, event: Event) -> None:
        if not can_see(SPECTATOR, event.audience):
            return
        if isinstance(event, DeathEvent):
            self.dead[event.player] = {"cause": event.cause, "role": event.role, "day": event.round}
        elif isinstance(event, GameOverEvent):
            self.winner = event.winner
            self.moving.clear()

    # views --------------------------------------------------------------------------------------
    def public(self, stage: str | None, day: int | None) -> dict[str, Any]:
        """What everyone sees: the table, who has died (and how, as announced), the stage, the winner."""
        return {"number": self.number, "players": self.players, "dead": self.dead, "stage": stage, "day": day,
                "winner": self.winner}

    def project(self, events: list[Event], viewer: Viewer) -> dict[str, Any]:
        """The game as ``viewer`` sees it, from ``events``: the events that viewer may see, and no others."""
        log = []
        pools: dict[str, dict[str, Any]] = {}
        for e in events:
            key = id(e)
            if key not in self._entries:
                self._entries[key] = entry(e)
            shown = self._entries[key]
            if shown is not None:
                log.append(shown)
            elif isinstance(e, TermsSharedEvent):
                for item in e.snapshot:
                    if item.get("term") in e.terms:
                        pools[str(item["term"])] = {"term": item.get("term"), "definition": item.get("definition"),
                                                    "pool": to_whom(e.audience), "coiner": _coiner(item)}
        moving = [m for audience, m in self.moving.values() if can_see(viewer, audience)]
        return {"log": log, "pools": list(pools.values()), "moving": moving}


def _coiner(item: dict[str, Any]) -> Any:
    provenance = item.get("provenance")
    return provenance.get("agent") if isinstance(provenance, dict) else None
