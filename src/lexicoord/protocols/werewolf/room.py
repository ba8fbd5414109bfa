"""Werewolf in a live room: people take seats among LLM players, and each browser is sent only what that
person may see.

Phases: ``lobby`` (people join; the leader starts), ``playing``, ``over`` (the roles and the whole game
revealed; the leader may start the next). Each game is the protocol's own (:mod:`lexicoord.protocols.werewolf`),
played unchanged with the people's seats bound to their browsers and stored as an episode of the room's run.

Who sees what. Everyone gets the room's public part (the table, the announced deaths, the stage). The game's
log goes in each person's own part, projected for that person alone (:mod:`werewolf_view`):

- a person with a living seat sees the events their seat may see (``room.visible_to``: their role, the
  wolves' channel if they are a wolf, their own night actions and results, everything public) and the term
  pools as shared with those audiences;
- a person who has died, or who joined after the game began, or was let go, is a spectator: public events
  only, so a dead wolf hears no more of the wolves' channel;
- once the game is over everyone sees everything, the moderator's record of each night included.

A request is shown to the person it is for (its task, its options); its history is the log above, not the
prompt's text. Who is moving is shown to the audience of the event that move will make.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event
from lexicoord.core.spec import EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.protocols.werewolf import WerewolfGame, WerewolfSettings
from lexicoord.protocols.werewolf.room_history import WerewolfRecord, history_csv, load_record
from lexicoord.protocols.werewolf.room_messages import MESSAGES, Act, Speak
from lexicoord.protocols.werewolf.room_view import EVERYTHING, SPECTATOR, WerewolfView
from lexicoord.protocols.werewolf.rules import check_table
from lexicoord.protocols.werewolf.state import game_item
from lexicoord.runs.records import EpisodeRecord
from lexicoord.web.adapters.base import AdapterError, CurrentGame, GameState, RoomAdapter
from lexicoord.web.messages import Inbound
from lexicoord.web.room import Person
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

    def game_settings(self) -> dict[str, Any]:
        """The protocol's settings, as stored with each game (and read by ``lexicoord report``)."""
        rules = self.model_dump(include=set(WerewolfSettings.model_fields) & set(type(self).model_fields))
        return WerewolfSettings(**rules).model_dump()


def room_game_item(seed: int | None, number: int) -> dict[str, Any]:
    """Game ``number`` (from 1) of a room: with the room's seed, by the rule campaigns use; without one, from a
    secret seed drawn now, which the saved game keeps (for a replay) and nobody is sent before the game ends."""
    if seed is not None:
        return game_item(seed, number - 1)
    return {"id": f"game-{number}", "seed": secrets.randbelow(2**62)}


class WerewolfState(GameState):
    phase: Literal["lobby", "playing", "over"] = "lobby"


class WerewolfRoom(RoomAdapter):
    state: WerewolfState
    protocol = "werewolf"
    settings_model = WerewolfRoomSettings
    state_model = WerewolfState
    messages = MESSAGES
    script = Path(__file__).with_name("room.js")

    def __init__(self, room: Any) -> None:
        super().__init__(room)
        self.state = WerewolfState()
        self.view: WerewolfView | None = None
        self.record: WerewolfRecord | None = None
        #: The spec of the game the view shows: the room's context is read only while it plays this game.
        self._spec: EpisodeSpec | None = None
        #: Set when the game's end is announced (or it is over): from then on everyone sees everything.
        self.revealed = False
        #: The spectators' projection, shared by all of them until the next change.
        self._spectators: dict[str, Any] | None = None
        self._fixed = {"settings": {**self.settings.game_settings(), "seat_timeout": self.settings.seat_timeout,
                                    "agent_timeout": self.settings.agent_timeout}}

    @property
    def settings(self) -> WerewolfRoomSettings:
        assert isinstance(self.room.settings, WerewolfRoomSettings)
        return self.room.settings

    # --------------------------------------------------------------------- creation and saving
    @classmethod
    def run_config(cls, settings: RoomSettings) -> dict[str, Any]:
        assert isinstance(settings, WerewolfRoomSettings)
        return {"lineup": [a.model_dump() for a in settings.agents], "settings": settings.game_settings()}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        self.revealed = self.state.phase == "over"


    # --------------------------------------------------------------------------------- moves
    async def start(self) -> None:
        if self.state.phase == "playing":
            raise AdapterError("wrong_phase", "A game is already under way.")
        lineup = self.lineup()
        try:
            check_table(WerewolfSettings(**self.settings.game_settings()), [a.name for a in lineup])
        except ConfigError as exc:
            raise AdapterError("bad_table", f"{exc} Invite people, add agents or change the roles.") from None
        self.state.games += 1
        number = self.state.games
        spec = EpisodeSpec(item_id=f"game-{number}", item=room_game_item(self.settings.seed, number),
                           settings=self.settings.game_settings(), lineup=lineup, repetition=number)
        self.state.current = CurrentGame(number=number, spec=spec, seed=spec.seed(self.settings.seed or 0))
        self.state.phase = "playing"
        self.room.notice = None
        await self.room.save()
        self._launch({})

    def _launch(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        current = self.state.current
        assert current is not None
        players = [{"name": a.name, "kind": a.kind, "model": a.model} for a in current.spec.lineup]
        self.view = WerewolfView(current.number, players)
        self._spec = current.spec
        self.revealed = False
        self._spectators = None
        self.room.play(WerewolfGame(), current.spec, current.number, current.seed, replay)

    async def end(self) -> None:
        if self.state.phase != "playing" or not self.room.interrupt_game("the leader ended the game"):
            raise AdapterError("wrong_phase", "No game is being played.")

    async def handle(self, person: Person, msg: Inbound) -> None:
        found = self.room.seat_request(person)
        if found is None:
            raise AdapterError("not_your_turn", "Nothing is asked of you now.")
        seat, pending = found
        if not isinstance(msg, (Act, Speak)):  # pragma: no cover - the room passes only this adapter's messages
            raise AdapterError("bad_message", "Not a Werewolf move.")
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

    # ------------------------------------------------------------------- the game as it goes
    def _ctx(self) -> EpisodeContext | None:
        """The context of the game this view shows (never a previous game's)."""
        ctx = self.room.ctx
        return ctx if ctx is not None and self._spec is not None and ctx.spec is self._spec else None

    def on_event(self, event: Event) -> None:
        if self.view is not None:
            self.view.on_event(event)
            if self.view.winner is not None:
                self.revealed = True
        self._spectators = None

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None:
        if self.view is not None:
            ctx = self._ctx()
            self.view.move_started(name, kind, round_, deadline, ctx.recorder.phase if ctx is not None else None)
        self._spectators = None

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        if self.view is not None:
            self.view.move_done(name)
        self._spectators = None

    async def game_over(self, record: EpisodeRecord, events: list[Event]) -> None:
        async with self.room.lock:
            self.state.current = None
            self.state.phase = "over"
            self.revealed = True
            self._spectators = None
            await self.room.save()
        if self.record is not None:
            self.record.add(record)

    def game_failed(self) -> None:
        """The game is over for good: it is not replayed after a restart (its journal stays for the audit)."""
        self.state.phase = "over"
        self.state.current = None
        self.revealed = True
        self._spectators = None
        asyncio.get_running_loop().create_task(self.room.save())

    # --------------------------------------------------------------------------------- views
    def public(self) -> dict[str, Any]:
        ctx = self._ctx()
        stage = ctx.recorder.phase if ctx is not None else None
        day = ctx.recorder.round if ctx is not None else None
        return {"phase": self.state.phase, "games": self.state.games, **self._fixed, "revealed": self.revealed,
                "game": self.view.public(stage, day) if self.view is not None else None}

    def seated(self, person: Person) -> bool:
        """Whether ``person`` plays in the game on the table (and still may: not dead, not let go)."""
        view = self.view
        return (view is not None and not person.absent and person.name not in view.dead
                and any(p["name"] == person.name and p["kind"] == "human" for p in view.players))

    def you(self, person: Person) -> dict[str, Any]:
        found = self.room.seat_request(person)
        request = None
        if found is not None:
            pending = found[1]
            request = {"kind": pending.kind, "round": pending.round, "task": pending.view.get("task"),
                       "channel": pending.view.get("channel"),
                       "choices": list(pending.choices) if pending.choices is not None else None}
        seated = self.seated(person)
        return {"request": request, "seated": seated, "game": self._projection(person, seated)}

    def _projection(self, person: Person, seated: bool) -> dict[str, Any] | None:
        """The game as this person may see it: their seat's events while they play, the public events as a
        spectator, every event once the game is over."""
        ctx, view = self._ctx(), self.view
        if view is None:
            return None
        if ctx is None:  # a restart after the game: its log is in the history
            return {"log": [], "pools": [], "moving": [], "viewer": "everyone" if self.revealed else "spectator"}
        if self.revealed:
            return {**view.project(ctx.recorder.visible_to(EVERYTHING), EVERYTHING), "viewer": "everyone"}
        if seated:
            viewer = ctx.viewer(person.name)
            return {**view.project(self.room.visible_to(person), viewer), "viewer": "seat"}
        if self._spectators is None:
            self._spectators = {**view.project(ctx.visible_to(None), SPECTATOR), "viewer": "spectator"}
        return self._spectators

    # ---------------------------------------------------------------------------- statistics
    async def stats(self) -> dict[str, Any]:
        if self.record is None:
            self.record = await self.room.services.rooms.call(load_record, self.room.services.store, self.room.run_id)
        return self.record.stats()

    def new_run(self) -> None:
        self.record = WerewolfRecord()

    async def _all(self) -> dict[str, Any]:
        services = self.room.services
        record = await services.rooms.call(load_record, services.store, self.room.run_id)
        return record.stats(None)

    async def export_json(self) -> dict[str, Any]:
        # The room's seed would tell the deal of the game in play: finished games carry their own in the history.
        return {"room": {"code": self.room.code, "run": self.room.run_id, "protocol": self.protocol,
                         "settings": self.settings.model_dump(mode="json", exclude={"seed"})},
                **(await self._all())}

    async def export_csv(self) -> str:
        return history_csv((await self._all())["history"])


__all__ = ["WerewolfRoom", "WerewolfRoomSettings", "room_game_item"]
