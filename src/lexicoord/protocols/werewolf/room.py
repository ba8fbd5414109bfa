"""Werewolf in a live room: people take seats among LLM players, and each browser is sent only what that
person may see.

Phases: ``lobby`` (people join; the leader starts), ``playing``, ``over`` (the roles and the whole game
revealed; the leader may start the next). Each game is the protocol's own (:mod:`lexicoord.protocols.werewolf`),
played unchanged with the people's seats bound to their browsers and stored as an episode of the room's run.

Who sees what. Everyone gets the room's public part (the table, the announced deaths, the stage). The game's
log goes in each person's own part, projected for that person alone (:mod:`werewolf_view`):

- a person with a living seat sees the events their seat may see (``room.events_for(room.seat_viewer(person))``: their role, the
  wolves' channel if they are a wolf, their own night actions and results, everything public) and the term
  pools as shared with those audiences;
- a person who has died, or who joined after the game began, or was let go, is a spectator: public events
  only, so a dead wolf hears no more of the wolves' channel;
- once the game is over everyone sees everything, the moderator's record of each night included.

A request is shown to the person it is for (its task, its options); its history is the log above, not the
prompt's text. Who is moving is shown to the audience of the event that move will make.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from lexicoord.core.audience import Viewer
from lexicoord.core.events import Event
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.protocols.werewolf import WerewolfGame, WerewolfSettings
from lexicoord.protocols.werewolf.room_history import WerewolfRecord, history_csv, load_record
from lexicoord.protocols.werewolf.room_messages import MESSAGES, Act, Speak
from lexicoord.protocols.werewolf.room_view import EVERYTHING, SPECTATOR, Projection, Table, WerewolfView
from lexicoord.protocols.werewolf.rules import check_table
from lexicoord.protocols.werewolf.state import DEALS, game_item
from lexicoord.runs.records import EpisodeRecord
from lexicoord.web.adapters.base import AdapterError, CurrentGame, RoomAdapter, RoomPhase, Watch
from lexicoord.web.frames import Part, SeatSeen
from lexicoord.web.messages import Inbound
from lexicoord.web.people import Person
from lexicoord.web.settings import RoomSettings


class WerewolfRoomSettings(RoomSettings):
    """The rules a room's games are played by (the protocol's flags; README "Werewolf" says what each does)."""

    protocol: str = Field(default="werewolf", max_length=60)
    condition: Literal["origin", "cogent"] = Field(
        default="origin", description="Condition (cogent: players may coin terms, in public and wolf-private pools)")
    wolves: int = Field(default=2, ge=1, le=4, description="Werewolves")
    seers: int = Field(default=1, ge=0, le=1, description="Seers")
    witches: int = Field(default=1, ge=0, le=1, description="Witches")
    guards: int = Field(default=1, ge=0, le=1, description="Guards")
    max_days: int = Field(default=5, ge=1, le=10, description="Days before the game ends as a draw")
    wolf_turns: int = Field(default=1, ge=0, le=3, description="Turns each wolf takes in the wolves' channel each night")
    discussion_rounds: int = Field(default=1, ge=0, le=3, description="Turns each player takes in the day's discussion")
    speaker_order: Literal["round_robin", "bidding"] = Field(default="round_robin", description="Speaker order")
    seer_learns: Literal["faction", "role"] = Field(default="faction", description="The seer learns")
    exile_rule: Literal["plurality", "majority"] = Field(default="plurality", description="Exile rule")
    exile_tie: Literal["nobody", "random", "revote"] = Field(default="nobody", description="A tied vote exiles")
    open_votes: bool = Field(default=False, description="Votes are announced as each is cast")
    last_words: Literal["none", "exiled", "all"] = Field(default="exiled", description="Last words")
    reveal_roles: bool = Field(default=True, description="A dead player's role is announced")
    witch_self_save: bool = Field(default=False, description="The witch may save herself")
    guard_repeat: bool = Field(default=False, description="The guard may protect the same player two nights running")
    max_tokens: int = Field(default=160, ge=32, le=400, description="Tokens an agent's speech may take")
    #: None (what the start page sends): every game's deal comes from a fresh secret seed (``secrets``), so no
    #: deal can be foreseen from another. A number: game n deals as ``werewolf run --seed N`` deals its game n
    #: (for tests and designs that fix the deals; anyone who knows the number knows the deals).
    seed: int | None = Field(default=None, ge=0)  # type: ignore[assignment]

    def check_table(self, seats: list[str]) -> None:
        check_table(WerewolfSettings(**self.game_settings()), seats)

    def game_settings(self) -> dict[str, Any]:
        """The protocol's settings, as stored with each game (and read by ``lexicoord report``)."""
        rules = self.model_dump(include=set(WerewolfSettings.model_fields) & set(type(self).model_fields))
        return WerewolfSettings(**rules).model_dump()

    def run_config(self) -> dict[str, Any]:
        # A seeded room deals by the campaigns' rule, which its run records: a study whose run began under the
        # older rule is refused on a restart, not dealt two kinds of games.
        deals = {"deals": DEALS} if self.seed is not None else {}
        return {"lineup": [a.model_dump() for a in self.agents], "settings": self.game_settings(), **deals}


def room_game_item(seed: int | None, number: int) -> dict[str, Any]:
    """Game ``number`` (from 1) of a room: with the room's seed, by the rule campaigns use; without one, from a
    secret seed drawn now, which the saved game keeps (for a replay) and nobody is sent before the game ends."""
    if seed is not None:
        return game_item(seed, number - 1)
    return {"id": f"game-{number}", "seed": secrets.randbelow(2**62)}


class RulesShown(WerewolfSettings):
    """The rules the room's games are played by, as the page states them, and the time each move may take."""

    model_config = ConfigDict(extra="forbid")
    seat_timeout: float
    agent_timeout: float


class WerewolfPublic(Part):
    """What everyone in a Werewolf room sees; ``revealed`` once the game's end is announced."""

    phase: RoomPhase
    games: int
    settings: RulesShown
    revealed: bool
    game: Table | None


class Asked(Part):
    """What a person's seat is asked: the task as its prompt words it, the channel of a talk, the choices."""

    kind: str
    round: int | None
    task: str | None
    channel: str | None
    choices: list[str] | None


class WerewolfYou(Part):
    """What one person sees: their request, whether they still play, and the game as they may see it."""

    request: Asked | None
    seated: bool
    game: Projection | None


class WerewolfRoom(RoomAdapter):
    protocol = "werewolf"
    settings_model = WerewolfRoomSettings
    messages = MESSAGES
    scripts = (Path(__file__).with_name("room.js"),)

    def __init__(self, room: Any) -> None:
        super().__init__(room)
        self.table: WerewolfView | None = None
        self.record: WerewolfRecord | None = None
        #: The spec of the game the view shows: the room's context is read only while it plays this game.
        self._spec: EpisodeSpec | None = None
        #: The projections shared by everyone who sees the game as the same viewer (the spectators; everyone
        #: once the game's end is announced), each built once until the next change.
        self._shared: dict[str, Projection] = {}
        #: The room's rules, built once: every broadcast sends them.
        self._rules = RulesShown(**self.settings.game_settings(), seat_timeout=self.settings.seat_timeout,
                                 agent_timeout=self.settings.agent_timeout)

    @property
    def settings(self) -> WerewolfRoomSettings:
        assert isinstance(self.room.settings, WerewolfRoomSettings)
        return self.room.settings

    @property
    def revealed(self) -> bool:
        """The game's end is announced (or it is over): from then on everyone sees everything."""
        return self.room.phase == "over" or (self.table is not None and self.table.winner is not None)

    # ------------------------------------------------------------------------------ the six calls
    async def start(self, number: int, lineup: list[AgentSpec]) -> EpisodeSpec | None:
        try:
            self.settings.check_table([a.name for a in lineup])
        except ConfigError as exc:
            raise AdapterError("bad_table", f"{exc} Invite people, add agents or change the roles.") from None
        return EpisodeSpec(item_id=f"game-{number}", item=room_game_item(self.settings.seed, number),
                           settings=self.settings.game_settings(), lineup=lineup, repetition=number)

    def watch(self, current: CurrentGame) -> Watch:
        players = [SeatSeen(name=a.name, kind=a.kind, model=a.model) for a in current.spec.lineup]
        self.table = WerewolfView(current.number, players)
        self._spec = current.spec
        self._shared = {}
        return Watch(WerewolfGame(), _Hears(self))

    async def move(self, person: Person | None, msg: Inbound) -> EpisodeSpec | None:
        if person is None or not isinstance(msg, (Act, Speak)):
            return None
        found = self.room.seat_request(person)
        if found is None:
            raise AdapterError("not_your_turn", "Nothing is asked of you now.")
        seat, pending = found
        if pending.round != msg.round:
            raise AdapterError("round_closed", f"That was for day {msg.round}; this is day {pending.round}.")
        if isinstance(msg, Speak):
            if pending.kind != "speak":
                raise AdapterError("wrong_move", f"You are asked to {pending.kind.replace('_', ' ')}, not to speak.")
            value = {"text": " ".join(msg.text.split())}
        else:
            if pending.kind == "speak" or msg.action != pending.kind:
                raise AdapterError("wrong_move", f"You are asked to {pending.kind.replace('_', ' ')}, "
                                                 f"not to {msg.action.replace('_', ' ')}.")
            if pending.choices is None or msg.target not in pending.choices:
                raise AdapterError("not_an_option", "That is not one of the choices on offer.")
            value = {"choice": msg.target}
        problem = pending.check(value)
        if problem is not None:  # the schema a model's answer meets
            raise AdapterError("bad_answer", f"Not accepted: {problem}.")
        seat.submit(value)
        return None

    # ------------------------------------------------------------------- the game as it goes
    def _in_play(self) -> bool:
        """Whether the room's game in play is the one this view shows (never a previous game's)."""
        return self._spec is not None and self.room.game_spec is self._spec

    # --------------------------------------------------------------------------------- views
    def view(self, person: Person | None) -> WerewolfPublic | WerewolfYou:
        if person is not None:
            return self._you(person)
        stage, day = self.room.clock if self._in_play() else (None, None)
        return WerewolfPublic(phase=self.room.phase, games=self.room.games, settings=self._rules,
                              revealed=self.revealed,
                              game=self.table.public(stage, day) if self.table is not None else None)

    def seated(self, person: Person) -> bool:
        """Whether ``person`` plays in the game on the table (and still may: not dead, not let go)."""
        view = self.table
        return (view is not None and not person.absent and person.name not in view.dead
                and any(p.name == person.name and p.kind == "human" for p in view.players))

    def _you(self, person: Person) -> WerewolfYou:
        found = self.room.seat_request(person)
        request = None
        if found is not None:
            pending = found[1]
            request = Asked(kind=pending.kind, round=pending.round, task=pending.view.get("task"),
                            channel=pending.view.get("channel"),
                            choices=list(pending.choices) if pending.choices is not None else None)
        seated = self.seated(person)
        return WerewolfYou(request=request, seated=seated, game=self._projection(person, seated))

    def _projection(self, person: Person, seated: bool) -> Projection | None:
        """The game as this person may see it: their seat's events while they play, the public events as a
        spectator, every event once the game is over."""
        view = self.table
        if view is None:
            return None
        if not self._in_play():  # a restart after the game: its log is in the history
            return Projection(log=[], pools=[], moving=[], viewer="everyone" if self.revealed else "spectator")
        if self.revealed:
            return self._shared_projection(view, EVERYTHING, "everyone")
        if seated:
            viewer = self.room.seat_viewer(person)
            return view.project(self.room.events_for(viewer), viewer, "seat")
        return self._shared_projection(view, SPECTATOR, "spectator")

    def _shared_projection(self, view: WerewolfView, viewer: Viewer, seen_as: Literal["spectator", "everyone"]
                           ) -> Projection:
        """The projection for one viewer everyone in it shares (a spectator's, or everyone's after the end): no
        seat's own, so no one's secret reaches another through it."""
        shared = self._shared.get(seen_as)
        if shared is None:
            shared = self._shared[seen_as] = view.project(self.room.events_for(viewer), viewer, seen_as)
        return shared

    # ---------------------------------------------------------------------------- statistics
    async def summary(self, ended: tuple[EpisodeRecord, list[Event]] | None = None) -> dict[str, Any]:
        if self.record is None:
            self.record = await self.room.services.rooms.call(load_record, self.room.services.store, self.room.run_id)
        elif ended is not None:
            self.record.add(ended[0])
        return self.record.stats()

    async def export(self, kind: Literal["json", "csv"]) -> dict[str, Any] | str:
        services = self.room.services
        every = (await services.rooms.call(load_record, services.store, self.room.run_id)).stats(None)
        if kind == "csv":
            return history_csv(every["history"])
        # The room's seed would tell the deal of the game in play: finished games carry their own in the history.
        return {"room": {"code": self.room.code, "run": self.room.run_id, "protocol": self.protocol,
                         "settings": self.settings.model_dump(mode="json", exclude={"seed"})}, **every}


class _Hears:
    """What the room tells of the game in play, to the table everyone sees (and the shared projections are made
    again on the next look)."""

    def __init__(self, room: WerewolfRoom) -> None:
        self.room = room

    def on_event(self, event: Event) -> None:
        if self.room.table is not None:
            self.room.table.on_event(event)
        self.room._shared = {}

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None = None) -> None:
        if self.room.table is not None:
            self.room.table.move_started(name, kind, round_, deadline, phase)
        self.room._shared = {}

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        if self.room.table is not None:
            self.room.table.move_done(name)
        self.room._shared = {}


__all__ = ["WerewolfRoom", "WerewolfRoomSettings", "room_game_item"]
