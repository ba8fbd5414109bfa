"""What a protocol's live room provides: six calls, and the room does the rest.

The generic room (:mod:`lexicoord.web.room`) owns people, presence, tokens and the lead
(:mod:`lexicoord.web.people`), the game's life (:mod:`lexicoord.web.room_game`: numbering games, saving the
game under way, playing it with people in their seats, replaying it from its journal after a restart, ending
it, storing it), saving (:mod:`lexicoord.web.room_state`) and broadcasting (:mod:`lexicoord.web.broadcast`).
An adapter decides only what its protocol makes different, through six calls:

1. :meth:`RoomAdapter.start`: the leader's ``start``: the next game's spec, or ``None`` when the protocol first
   opens a phase of its own (the coordination game's manual mode asks the leader for a sentence);
2. :meth:`RoomAdapter.move`: one of the protocol's own messages from a person; it may begin a game (returns
   its spec) once a phase of its own is done;
3. :meth:`RoomAdapter.watch`: the protocol and a :class:`GameWatcher` for a game about to be played (a new
   one, or one replayed after a restart): the room tells the watcher every event and move as it happens;
4. :meth:`RoomAdapter.view`: what a person (or, for ``None``, everyone) sees of the protocol's part;
5. :meth:`RoomAdapter.summary`: the statistics pages show, told of each game as it is stored;
6. :meth:`RoomAdapter.export`: every game of the room as JSON or CSV.

Settings from the start page's form are the settings model's (:class:`RoomSettings`: its fields, the
operator's ``choices``, ``check`` and ``run_config``), and what the adapter saves is its ``state`` (a
:class:`GameState` model of its own fields, which the room saves and restores whole and never reads). The
room's own record of its games (its phase, how many games were begun, the game under way) is the room's:
an adapter reads it through :class:`RoomView` (``phase``, ``games``, ``current``) and never writes it. A phase
of the protocol's own (the coordination game's manual mode) is opened by :meth:`RoomAdapter.start` returning
``None`` (the room's phase is then ``own``) and ends when a :meth:`RoomAdapter.move` returns the game's spec,
or when the leader's ``end_game`` reaches :meth:`RoomAdapter.move` without a refusal. An adapter never sees
another person's token, and what it shows a person is built only from what that person's seat may see.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel

from lexicoord.core.events import Event
from lexicoord.core.protocol import Protocol as GameRules
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.runs.records import EpisodeRecord
from lexicoord.web.errors import AdapterError
from lexicoord.web.messages import Inbound
from lexicoord.web.settings import RoomSettings

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Coroutine

    from lexicoord.core.audience import Viewer
    from lexicoord.core.seat import Request
    from lexicoord.seats.human import HumanSeat
    from lexicoord.web.people import Person
    from lexicoord.web.services import Services


class CurrentGame(BaseModel):
    """The game under way, as a room saves it: enough to play it again from its journal after a restart."""

    number: int
    spec: EpisodeSpec
    seed: int


#: Where a room is: no game yet, a phase of the protocol's own (before a game), a game under way, a game over.
RoomPhase = Literal["lobby", "own", "playing", "over"]


class GameState(BaseModel):
    """What an adapter saves of its own (the room saves and restores it whole, and never reads it); an adapter's
    state model extends it with its own fields (a phase of its own, where its items are)."""

    version: int = 1


class GameWatcher(Protocol):
    """Hears a game as it is played, to build what the pages show of it."""

    def on_event(self, event: Event) -> None: ...
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None) -> None: ...
    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None: ...


@dataclass(frozen=True)
class Watch:
    """What :meth:`RoomAdapter.watch` gives for a game: its rules, and who hears it."""

    rules: GameRules[Any, Any, Any]
    watcher: GameWatcher


class RoomView(Protocol):
    """The room as its adapter sees it: everything an adapter may use of it, and nothing else."""

    settings: RoomSettings
    services: Services
    run_id: str
    code: str
    lock: asyncio.Lock

    def lineup(self) -> list[AgentSpec]: ...
    def seat_request(self, person: Person) -> tuple[HumanSeat, Request] | None: ...
    def seat_viewer(self, person: Person) -> Viewer: ...
    def events_for(self, viewer: Viewer) -> list[Event]: ...
    @property
    def game_spec(self) -> EpisodeSpec | None: ...
    @property
    def clock(self) -> tuple[str | None, int | None]: ...
    @property
    def phase(self) -> RoomPhase: ...
    @property
    def games(self) -> int: ...
    @property
    def current(self) -> CurrentGame | None: ...
    async def save(self) -> None: ...
    def changed(self) -> None: ...
    def run_task(self, coro: Coroutine[Any, Any, None]) -> None: ...


class RoomAdapter(ABC):
    #: The registry name of the protocol this adapter plays.
    protocol: ClassVar[str]
    settings_model: ClassVar[type[RoomSettings]] = RoomSettings
    state_model: ClassVar[type[GameState]] = GameState
    state: GameState
    #: The moves people send besides every room's (hello, start, end_game, drop, hand_over, take_lead, ping).
    messages: ClassVar[tuple[type[Inbound], ...]] = ()
    #: Of :attr:`messages`, those only the leader may send.
    leader_messages: ClassVar[tuple[type[Inbound], ...]] = ()
    #: The page's part for this protocol (JavaScript registering ``adapters[protocol]``): its files, served one
    #: after another as ``/adapters/<protocol>.js``, so that a room may build on a shared part (a turn room's
    #: ``(TURNS_SCRIPT, its own file)``, the own file changing what the shared one drew); a third-party adapter
    #: ships its files beside its module.
    scripts: ClassVar[tuple[Path, ...]] = ()

    def __init__(self, room: RoomView) -> None:
        self.room = room
        self.state = self.state_model()

    @property
    def settings(self) -> RoomSettings:
        return self.room.settings

    # ------------------------------------------------------------------------------ the six calls
    @abstractmethod
    async def start(self, number: int, lineup: list[AgentSpec]) -> EpisodeSpec | None:
        """The leader's ``start``: game ``number``'s spec for this line-up (people present, the leader first,
        then the agents), or ``None`` when the protocol opens a phase of its own first. Raise
        :class:`AdapterError` to refuse (too few players, a bad table)."""

    async def move(self, person: Person | None, msg: Inbound) -> EpisodeSpec | None:
        """One of :attr:`messages` from ``person``: an answer to the request their seat waits on, or a move of
        the protocol's own phases, which may begin game ``self.room.games + 1`` (return its spec); the leader's
        ``end_game`` in a phase of the adapter's own reaches here too (unless refused, the room's phase then goes
        back to where it was), and (with no person) the room's ``restarted`` when it came back in a phase of the
        adapter's own. Raise :class:`AdapterError` to refuse it."""
        raise AdapterError("bad_message", "This room takes no such move.")

    @abstractmethod
    def watch(self, current: CurrentGame) -> Watch:
        """The rules and a fresh watcher for ``current``, about to be played (or played again after a restart)."""

    @abstractmethod
    def view(self, person: Person | None) -> BaseModel:
        """The protocol's part of the page, as a model whose JSON the room merges into the frame: for ``None``,
        what everyone sees (public events only); for a person, what only they see (their own request, and their
        seat's view)."""

    @abstractmethod
    async def summary(self, ended: tuple[EpisodeRecord, list[Event]] | None = None) -> dict[str, Any]:
        """The statistics and history pages show; with ``ended``, a game just stored to count in."""

    @abstractmethod
    async def export(self, kind: Literal["json", "csv"]) -> dict[str, Any] | str:
        """Every game of the room: a JSON document, or a CSV table."""


__all__ = ["AdapterError", "CurrentGame", "GameState", "GameWatcher", "RoomAdapter", "RoomPhase", "RoomView", "Watch"]
