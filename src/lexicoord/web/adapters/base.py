"""What a protocol's live room must provide, and what the generic room gives it.

The generic room (:mod:`lexicoord.web.room`) keeps people, tokens, the lead,
presence, saving and broadcasting, and plays any protocol's episode with its
seats bound to people (journal, timeouts, interrupts). An adapter decides
everything the protocol makes different: which phases there are, what a
``start`` begins, which moves people send, what everyone sees of a game, and
the statistics and exports. It never sees another person's token, and what it
shows a person is built only from what that person's seat may see.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from lexicoord.core.events import Event
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.runs.records import EpisodeRecord
from lexicoord.web.messages import Inbound
from lexicoord.web.settings import RoomSettings

if TYPE_CHECKING:
    from lexicoord.web.room import Person, Room
    from lexicoord.web.services import Services


class CurrentGame(BaseModel):
    """The game under way, as a room saves it: enough to play it again from its journal after a restart."""

    number: int
    spec: EpisodeSpec
    seed: int


class GameState(BaseModel):
    """What every adapter saves of its games; an adapter's state model extends it (its own phases, fields)."""

    version: int = 1
    phase: str = "lobby"
    games: int = 0
    current: CurrentGame | None = None


class AdapterError(Exception):
    """A move the adapter refuses; ``code`` is for programs, the message for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class RoomAdapter(ABC):
    #: The registry name of the protocol this adapter plays.
    protocol: ClassVar[str]
    settings_model: ClassVar[type[RoomSettings]] = RoomSettings
    state_model: ClassVar[type[GameState]]
    state: GameState
    #: The moves people send besides every room's (hello, start, end_game, drop, hand_over, take_lead, ping).
    messages: ClassVar[tuple[type[Inbound], ...]] = ()
    #: The page's part for this protocol (JavaScript registering ``adapters[protocol]``), served at
    #: ``/adapters/<protocol>.js``; a third-party adapter ships its own file beside its module.
    script: ClassVar[Path | None] = None

    def __init__(self, room: Room) -> None:
        self.room = room

    @property
    def settings(self) -> RoomSettings:
        return self.room.settings

    # --------------------------------------------------------------------- creation and saving
    @classmethod
    def check(cls, settings: RoomSettings, services: Services) -> None:
        """Refuse settings the operator did not offer (a dataset, a model): ``ConfigError``. Every room's agents
        sit on served models only; an adapter checks its own fields and calls this."""
        unknown = sorted({a.model for a in settings.agents} - set(services.model_names))
        if unknown:
            raise ConfigError(f"Model {unknown[0]} is not offered by this server; choose one of: "
                              f"{', '.join(services.model_names)}.")

    @classmethod
    def choices(cls, services: Services) -> dict[str, list[Any]]:
        """Values the operator offers for the room's own settings fields (the datasets served, say), by field:
        the start page offers these and nothing else, and :meth:`check` refuses anything else."""
        return {}

    @classmethod
    def run_config(cls, settings: RoomSettings) -> dict[str, Any]:
        """What the room's run records as its settings (``lexicoord report`` reads it)."""
        return {"settings": settings.model_dump(mode="json")}

    def saved(self) -> dict[str, Any]:
        """The adapter's state as saved with the room."""
        return self.state.model_dump(mode="json")

    def restore(self, state: dict[str, Any]) -> None:
        """The saved state back; a game marked as playing with nothing to play again is over."""
        self.state = self.state_model.model_validate(state)
        if self.state.phase == "playing" and not self.state.current:
            self.state.phase = "over"

    async def resume(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        """After a restart: play an interrupted game again from its journal."""
        if self.state.phase == "playing" and self.state.current:
            self._launch(replay)

    @abstractmethod
    def _launch(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        """Play the current game, the journal answering for the moves already made."""

    # --------------------------------------------------------------------------------- moves
    @abstractmethod
    async def start(self) -> None:
        """The leader's ``start``."""

    @abstractmethod
    async def end(self) -> None:
        """The leader's ``end_game``."""

    @abstractmethod
    async def handle(self, person: Person, msg: Inbound) -> None:
        """One of :attr:`messages` from ``person``; raise :class:`AdapterError` to refuse it."""

    def leader_only(self, msg: Inbound) -> bool:
        """Whether only the leader may send ``msg``."""
        return False

    def lineup(self) -> list[AgentSpec]:
        """The leader first (Player 1), then the other people present, then the agents."""
        leader = self.room.leader
        present = sorted((p for p in self.room.people.values() if not p.absent), key=lambda p: p is not leader)
        people = [AgentSpec(name=p.name, kind="human") for p in present]
        agents = [AgentSpec(name=a.name, model=a.model, options={"temperature": self.settings.temperature})
                  for a in self.settings.agents]
        return people + agents

    # ------------------------------------------------------------------- the game as it goes
    def on_event(self, event: Event) -> None:
        """Every event of the game being played, as it happens (filter by audience before showing it)."""

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None: ...

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None: ...

    @abstractmethod
    async def game_over(self, record: EpisodeRecord, events: list[Event]) -> None:
        """The game ended and is stored."""

    def game_failed(self) -> None:
        """The server hit an error while the game was played (the room says so on the page)."""

    # --------------------------------------------------------------------------------- views
    @abstractmethod
    def public(self) -> dict[str, Any]:
        """What everyone in the room sees of the game (public events only)."""

    @abstractmethod
    def you(self, person: Person) -> dict[str, Any]:
        """What only ``person`` sees: their own request."""

    # ---------------------------------------------------------------------------- statistics
    @abstractmethod
    async def stats(self) -> dict[str, Any]:
        """Statistics and history for the pages, after every game."""

    def new_run(self) -> None:
        """The room was just created: its run has no games yet, so nothing needs reading."""

    @abstractmethod
    async def export_json(self) -> dict[str, Any]: ...

    @abstractmethod
    async def export_csv(self) -> str: ...
