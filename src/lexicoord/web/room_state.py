"""What a room saves, and how rooms saved in older layouts read.

Separate from the room because a saved state outlives the code that wrote it: the store keeps every open
room's state across restarts and upgrades, :mod:`lexicoord.web.persistence` reads it without a room (the game
whose journal to replay, a study's game to forget on closing), and each older layout is read here, in one
place, into the newest. The room's parts each give their own piece (:class:`SavedPerson` from the people,
:class:`Played` from the game's life, the adapter's own ``state`` kept whole and unread).

Layouts: before states were versioned, the game's fields sat beside the people; in version 1 the room's
record of its games (phase, count, game under way) sat inside the adapter's state; from version 2 it is the
room's own :class:`Played`, and the adapter's state holds only the adapter's fields (a phase of its own is
kept there as its ``phase``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from lexicoord.web.adapters.base import CurrentGame, RoomPhase

#: The phases that are the room's own; any other phase an older layout saved was the adapter's.
ROOM_PHASES = ("lobby", "playing", "over")


class SavedPerson(BaseModel):
    name: str
    token_hash: str
    joined_at: float = 0.0
    absent: bool = False
    participant: str | None = None


class Managed(BaseModel):
    """What makes a room a study's: whose it is, and the model that takes over a person who leaves."""

    study: str
    model: str
    #: A person who lets a move time out is taken over too (else only one gone past the study's grace period).
    on_idle: bool = True
    #: The study's group that plays here, and the condition it was assigned (recorded in every game's place).
    group: str | None = None
    condition: str | None = None
    #: The keys of the room's own games: the only games of the study's run its pages are shown.
    games: list[str] = Field(default_factory=list)


class Played(BaseModel):
    """The room's own record of its games: where it is, how many games were begun, and the game under way
    (enough to play it again from its journal after a restart)."""

    phase: RoomPhase = "lobby"
    games: int = 0
    current: CurrentGame | None = None


class RoomState(BaseModel):
    """What a room saves: its people and lead, its record of its games, and the adapter's own state."""

    version: int = 2
    people: list[SavedPerson] = Field(default_factory=list)
    leader: str | None = None
    played: Played = Field(default_factory=Played)
    #: The adapter's own state (:attr:`lexicoord.web.adapters.base.RoomAdapter.state`), as it dumped it.
    game: dict[str, Any] = Field(default_factory=dict)
    #: The network the room was created from (:func:`lexicoord.web.ratelimit.address_key`), so the cap on
    #: rooms per client holds across a restart; cleared when the room closes.
    creator: str | None = None
    managed: Managed | None = None

    @model_validator(mode="before")
    @classmethod
    def _older_layouts(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "version" not in data and "game" not in data:
            data = _first_layout(data)
        if data.get("version") == 1:
            data = _room_kept_its_games_in_the_adapters_state(data)
        return data


def _first_layout(data: dict[str, Any]) -> dict[str, Any]:
    """Rooms saved before states were versioned kept the game's fields beside the people."""
    game = {k: data[k] for k in ("phase", "cursor", "games", "current", "manual") if k in data}
    return {"version": 1, "people": data.get("people", []), "leader": data.get("leader"), "game": game}


def _room_kept_its_games_in_the_adapters_state(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept the room's phase, game count and game under way in the adapter's state: they move to the
    room's own record, and a phase that was not the room's (the adapter's own) stays the adapter's."""
    game = dict(data.get("game") or {})
    phase = game.pop("phase", "lobby")
    played = {"phase": phase if phase in ROOM_PHASES else "own", "games": game.pop("games", 0),
              "current": game.pop("current", None)}
    if phase not in ROOM_PHASES:
        game["phase"] = phase
    return {**data, "version": 2, "played": played, "game": game}
