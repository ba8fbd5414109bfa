"""One live room: who is in it, which phase it is in, and the game being played.

Phases: ``lobby`` (people join; the leader starts), in manual mode ``sentence``
(the leader writes a sentence and picks the word), ``proposing`` (agents
propose meanings) and ``confirm`` (the leader edits the option set), then
``playing``, then ``over`` (the outcome; the leader starts the next game).

Everything a person may do arrives through :meth:`Room.handle` and is checked
there: who may do it (only the leader starts, ends, clarifies, lets people go),
when (a choice only for the request that person was given, in that round), and
what (a choice must be one of the options). The lead: the first to join leads;
the leader may hand it over; when the leader has been away (no open page) for
``LEAD_AFTER`` seconds, anyone still playing may take it. A new leader is
Player 1 from the next game on; the game in progress keeps its seats, and the
new leader may end it or let the old leader go. Every change is saved before it is
shown, and each game is stored as an episode of the room's run, so it appears
in ``lexicoord coord report`` like any campaign.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lexicoord.agents.base import AgentSpec
from lexicoord.agents.human import HumanSeat
from lexicoord.errors import LexicoordError
from lexicoord.protocols.base import EpisodeContext
from lexicoord.protocols.coordination.manual import gather_proposals, manual_item, merge_proposals, validate_manual
from lexicoord.protocols.coordination.players import LLMPlayer
from lexicoord.runs.episode import play_episode
from lexicoord.runs.events import Event
from lexicoord.runs.grid import EpisodeSpec
from lexicoord.web import messages as m
from lexicoord.web.gameview import GameView
from lexicoord.web.history import RoomRecord, load_record
from lexicoord.web.live import LiveGame, LiveRecorder
from lexicoord.web.settings import RoomSettings, clean_name
from lexicoord.web.tokens import hash_token, new_token, token_matches

if TYPE_CHECKING:
    from lexicoord.web.connection import Connection
    from lexicoord.web.services import Services

log = logging.getLogger(__name__)
#: Seconds a leader may be away (no open page) before another person may take the lead.
LEAD_AFTER = 60.0


class RoomError(Exception):
    """A request the room refuses; ``code`` is for programs, the message for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Person:
    name: str
    token_hash: str
    joined_at: float = field(default_factory=time.time)
    absent: bool = False
    connections: set[Connection] = field(default_factory=set)
    #: Since when the person has had no open page (not saved: after a restart everyone starts away).
    away_since: float | None = field(default_factory=time.time)

    def saved(self) -> dict[str, Any]:
        return {"name": self.name, "token_hash": self.token_hash, "joined_at": self.joined_at, "absent": self.absent}


class Room:
    def __init__(self, services: Services, room_id: str, code: str, run_id: str, settings: RoomSettings) -> None:
        self.services = services
        self.id = room_id
        self.code = code
        self.run_id = run_id
        self.settings = settings
        #: The room's fixed facts, built once: every broadcast sends them.
        self._fixed = {
            "agents": [a.model_dump() for a in settings.agents],
            "settings": {"clarification_bound": settings.clarification_bound, "seat_timeout": settings.seat_timeout,
                         "agent_timeout": settings.agent_timeout, "dataset": settings.dataset},
        }
        self.people: dict[str, Person] = {}
        self.phase = "lobby"
        self.cursor = 0
        self.games = 0
        self.current: dict[str, Any] | None = None  # number, spec, seed of the game being played
        self.manual: dict[str, Any] | None = None
        self.view: GameView | None = None
        self.game: LiveGame | None = None
        self.task: asyncio.Task[None] | None = None
        self.ended = False
        self.notice: str | None = None
        self.stats: dict[str, Any] | None = None
        self.record: RoomRecord | None = None
        self._dirty = False
        self._lock = asyncio.Lock()
        #: Who leads: the first to join, until the lead is handed over or taken.
        self.leader_name: str | None = None
        #: Seconds the leader must be away before someone else may take the lead.
        self.lead_after = LEAD_AFTER

    # ---------------------------------------------------------------------------------- saved state
    def saved_state(self) -> dict[str, Any]:
        return {
            "people": [p.saved() for p in self.people.values()], "phase": self.phase, "cursor": self.cursor,
            "games": self.games, "current": self.current, "manual": self.manual, "leader": self.leader_name,
        }

    def restore(self, state: dict[str, Any]) -> None:
        for p in state.get("people", []):
            self.people[p["name"]] = Person(p["name"], p["token_hash"], p.get("joined_at", 0.0), p.get("absent", False))
        self.phase, self.cursor, self.games = state.get("phase", "lobby"), state.get("cursor", 0), state.get("games", 0)
        self.current, self.manual = state.get("current"), state.get("manual")
        self.leader_name = state.get("leader")
        if self.phase == "proposing":  # the proposals were lost with the server: ask for them again
            self.phase = "sentence"
        if self.phase == "playing" and not self.current:
            self.phase = "over"

    async def save(self) -> None:
        await self.services.rooms.save_state(self.id, self.saved_state())

    # ------------------------------------------------------------------------------------- people
    @property
    def leader(self) -> Person | None:
        if self.leader_name in self.people:
            return self.people[self.leader_name]
        return next(iter(self.people.values()), None)

    async def join(self, name: str) -> tuple[Person, str]:
        """A new person in the room; the first is Player 1, the coalition leader. Returns the secret token."""
        try:
            name = clean_name(name)
        except ValueError as exc:
            raise RoomError("bad_name", str(exc)) from None
        taken = {n.lower() for n in self.people} | {a.name.lower() for a in self.settings.agents}
        if name.lower() in taken:
            raise RoomError("name_taken", f"'{name}' is taken in this room; choose another name.")
        if sum(1 for p in self.people.values() if not p.absent) >= self.settings.max_people:
            raise RoomError("room_full", f"The room is full ({self.settings.max_people} people).")
        token = new_token()
        person = Person(name, hash_token(token))
        async with self._lock:
            self.people[name] = person
            if self.leader_name is None:
                self.leader_name = name
            await self.save()
        self.changed()
        return person, token

    def person_for(self, token: str) -> Person | None:
        for p in self.people.values():
            if token_matches(token, p.token_hash):
                return p
        return None

    def connect(self, person: Person, conn: Connection) -> None:
        person.connections.add(conn)
        person.away_since = None
        self.changed()

    def disconnect(self, person: Person, conn: Connection) -> None:
        person.connections.discard(conn)
        if not person.connections:
            person.away_since = time.time()
        self.changed()

    # ------------------------------------------------------------------------------------ handling
    async def handle(self, person: Person, msg: m.Message) -> None:
        """Act on one validated message from ``person``; :class:`RoomError` if the room refuses it."""
        if isinstance(msg, m.Choose):
            return self._choose(person, msg)
        if isinstance(msg, m.Clarify):
            return self._clarify(person, msg)
        if isinstance(msg, m.TakeLead):
            async with self._lock:
                await self._take_lead(person)
            return self.changed()
        if person is not self.leader:
            raise RoomError("not_leader", "Only the leader (Player 1) can do that.")
        async with self._lock:
            if isinstance(msg, m.Start):
                await self._start()
            elif isinstance(msg, m.EndGame):
                await self._end()
            elif isinstance(msg, m.ManualSentence):
                await self._manual_sentence(msg.sentence, msg.word)
            elif isinstance(msg, m.ManualConfirm):
                await self._manual_confirm(msg.options)
            elif isinstance(msg, m.Drop):
                await self._drop(msg.name)
            elif isinstance(msg, m.HandOver):
                await self._hand_over(msg.name)
        self.changed()

    def _seat_request(self, person: Person) -> tuple[HumanSeat, dict[str, Any]] | None:
        if self.game is None:
            return None
        seat = self.game.seats.get(person.name)
        if seat is None or not seat.waiting or seat.pending is None:
            return None
        return seat, seat.pending

    def _choose(self, person: Person, msg: m.Choose) -> None:
        found = self._seat_request(person)
        if found is None or found[1]["kind"] not in ("choose", "announce"):
            raise RoomError("not_your_turn", "There is no choice to make now.")
        seat, pending = found
        if pending["round"] != msg.round:
            raise RoomError("round_closed", f"Round {msg.round} is closed; this is round {pending['round']}.")
        if msg.choice not in pending["options"]:
            raise RoomError("not_an_option", "That is not one of the meanings on offer.")
        seat.submit({"choice": msg.choice, "justification": " ".join(msg.justification.split())})

    def _clarify(self, person: Person, msg: m.Clarify) -> None:
        found = self._seat_request(person)
        if found is None or found[1]["kind"] != "clarify":
            raise RoomError("not_your_turn", "No clarification is asked for now.")
        seat, pending = found
        if pending["round"] != msg.round:
            raise RoomError("round_closed", f"Round {msg.round} is over.")
        seat.submit({"statement": " ".join(msg.statement.split())})

    async def _start(self) -> None:
        if self.phase not in ("lobby", "over"):
            raise RoomError("wrong_phase", "A game is already under way.")
        if self.settings.mode == "manual":
            self.phase = "sentence"
            self.manual = None
            await self.save()
            return
        items = self.services.dataset(self.settings.dataset)
        order = random.Random(self.settings.seed).sample(range(len(items)), len(items))
        item = items[order[self.cursor % len(items)]].as_task()
        self.cursor += 1
        await self._begin(item)

    def lineup(self) -> list[AgentSpec]:
        """The leader first (Player 1), then the other people present, then the agents."""
        present = sorted((p for p in self.people.values() if not p.absent), key=lambda p: p is not self.leader)
        people = [AgentSpec(name=p.name, kind="human") for p in present]
        agents = [AgentSpec(name=a.name, model=a.model, options={"temperature": self.settings.temperature})
                  for a in self.settings.agents]
        return people + agents

    async def _begin(self, item: dict[str, Any]) -> None:
        lineup = self.lineup()
        if len(lineup) < 2:
            raise RoomError("too_few", "A game needs at least two players: invite someone or add agents.")
        self.games += 1
        spec = EpisodeSpec(item_id=str(item["id"]), item=item, settings=self.settings.game_settings(), lineup=lineup,
                           repetition=self.games)
        self.current = {"number": self.games, "spec": spec.model_dump(mode="json"),
                        "seed": spec.seed(self.settings.seed)}
        self.phase = "playing"
        self.ended = False
        self.notice = None
        await self.save()
        self._launch({})

    def _launch(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        assert self.current is not None
        spec = EpisodeSpec.model_validate(self.current["spec"])
        players = [{"name": a.name, "kind": a.kind, "model": a.model} for a in spec.lineup]
        self.view = GameView(self.current["number"], spec.item, players)
        seats = {a.name: HumanSeat(a.name, timeout=self.settings.seat_timeout) for a in spec.lineup if a.kind == "human"}
        for seat in seats.values():
            # A request is shown as it opens; its end is shown by move_done once the journal has the
            # move, so a vote costs one full-room broadcast, not two.
            seat.listener = lambda seat=seat: self.changed() if seat.waiting else None
        self.game = LiveGame(self, seats, replay, self.settings.agent_timeout)
        self.task = asyncio.create_task(self._play(spec, self.current["number"], self.current["seed"]))
        self.task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("room %s: %s", self.code, task.exception(), exc_info=task.exception())
            self.notice = "The server hit an error in this game; the leader can start the next one."
            self.phase = "over"
            self.changed()

    async def resume(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        """After a restart: play the interrupted game again from its journal, or reopen the room as it was."""
        if self.phase == "playing" and self.current:
            self._launch(replay)
        await self.refresh_stats()

    async def _play(self, spec: EpisodeSpec, number: int, seed: int) -> None:
        assert self.game is not None
        ctx = EpisodeContext(spec=spec, seed=seed, models=self.services.models, recorder=LiveRecorder(self))
        record, events = await play_episode(self.game, ctx, self.run_id, position=number)
        try:
            record.id = await self.services.rooms.call(self.services.store.save_episode, record, events)
            await self.services.rooms.call(self.services.store.set_run_status, self.run_id, "open")
            await self.services.rooms.clear_moves(self.id, number)
        except Exception:  # the store is gone: keep the room up and say so
            log.exception("room %s: game %s could not be saved", self.code, number)
            self.notice = "This game could not be saved; it will be played again after a restart."
            self.changed()
            return
        async with self._lock:
            self.current = None
            self.phase = "over"
            await self.save()
        if self.record is not None:
            self.record.add(record, events)
        await self.refresh_stats()
        self.changed()

    async def _end(self) -> None:
        if self.phase in ("sentence", "proposing", "confirm"):
            self.phase = "over" if self.games else "lobby"
            self.manual = None
            await self.save()
            return
        if self.phase != "playing" or self.game is None:
            raise RoomError("wrong_phase", "No game is being played.")
        self.ended = True
        for player in self.game.players.values():
            player.interrupt("the leader ended the game")

    async def _drop(self, name: str) -> None:
        person = self.people.get(name)
        if person is None or person is self.leader:
            raise RoomError("no_such_person", "The leader can let go any other person in the room, by name.")
        person.absent = True
        if self.game is not None and name in self.game.players:
            self.game.players[name].interrupt(f"{name} left the room", leave=True)
        self.notice = f"The game goes on without {name}."
        await self.save()

    async def _hand_over(self, name: str) -> None:
        person = self.people.get(name)
        if person is None or person.absent or person is self.leader:
            raise RoomError("no_such_person", "Hand the lead to another person who is in the room, by name.")
        self.leader_name = name
        self.notice = f"{name} now leads; from the next game on, {name} is Player 1."
        await self.save()

    async def _take_lead(self, person: Person) -> None:
        """The way out of a room whose leader has gone: anyone present may lead once the leader is away."""
        leader = self.leader
        if person.absent:
            raise RoomError("absent", "You left this room's games; only people still playing can lead.")
        if leader is person:
            raise RoomError("already_leader", "You already lead this room.")
        if leader is not None and not leader.absent:
            away = 0.0 if leader.away_since is None else time.time() - leader.away_since
            if away < self.lead_after:
                raise RoomError("leader_present", f"{leader.name} leads and has been away for {away:.0f} s; the lead "
                                                  f"can be taken after {self.lead_after:.0f} s away.")
        before = leader.name if leader else "nobody"
        self.leader_name = person.name
        self.notice = f"{person.name} took the lead from {before}; from the next game on, {person.name} is Player 1."
        await self.save()

    # ---------------------------------------------------------------------------------- manual mode
    async def _manual_sentence(self, sentence: str, word: str) -> None:
        if self.phase != "sentence":
            raise RoomError("wrong_phase", "Start a game in manual mode first.")
        try:
            sentence, word = validate_manual(sentence, word)
        except LexicoordError as exc:
            raise RoomError("bad_sentence", str(exc)) from None
        self.manual = {"sentence": sentence, "word": word, "proposals": [], "options": [], "silent": []}
        self.phase = "proposing"
        await self.save()
        self.task = asyncio.create_task(self._propose(sentence, word))
        self.task.add_done_callback(self._task_done)

    async def _propose(self, sentence: str, word: str) -> None:
        ctx = EpisodeContext(spec=EpisodeSpec(item_id="manual"), seed=self.settings.seed + self.games,
                             models=self.services.models)
        players = [LLMPlayer(ctx.llm_agent(AgentSpec(name=a.name, model=a.model))) for a in self.settings.agents]
        try:
            proposals = await asyncio.wait_for(gather_proposals(players, sentence, word), self.settings.agent_timeout)
        except TimeoutError:
            proposals = []
        merged = merge_proposals(proposals)
        async with self._lock:
            if self.phase != "proposing" or self.manual is None:
                return
            self.manual["proposals"] = [o.model_dump() for o in merged]
            self.manual["options"] = [o.text for o in merged]
            self.manual["silent"] = sorted({p.name for p in players} - {p.agent for p in proposals})
            self.phase = "confirm"
            await self.save()
        self.changed()

    async def _manual_confirm(self, options: list[str]) -> None:
        if self.phase != "confirm" or self.manual is None:
            raise RoomError("wrong_phase", "There is no option set to confirm.")
        try:
            item = manual_item(self.manual["sentence"], self.manual["word"], options, item_id=f"manual-{self.games + 1}")
        except LexicoordError as exc:
            raise RoomError("bad_options", str(exc)) from None
        await self._begin(item.as_task())

    # ------------------------------------------------------------------------- hooks of the live game
    def move_started(self, name: str, kind: str, round_: int, deadline: float | None) -> None:
        if self.view is not None:
            self.view.move_started(name, kind, round_, deadline)
        self.changed()

    def move_done(self, name: str, kind: str, round_: int, failure: str | None) -> None:
        if self.view is not None:
            self.view.move_done(name, kind, round_, failure)
        self.changed()

    def on_event(self, event: Event) -> None:
        if self.view is not None:
            self.view.on_event(event)
        self.changed()

    def end_requested(self) -> bool:
        return self.ended

    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None:
        if self.current is not None:
            await self.services.rooms.add_move(self.id, self.current["number"], name, idx, entry)

    # ---------------------------------------------------------------------------------- statistics
    async def refresh_stats(self) -> None:
        """Statistics to every page: read from the store once, then kept up to date game by game."""
        if self.record is None:
            self.record = await self.services.rooms.call(
                load_record, self.services.store, self.run_id, self.settings.clarification_bound
            )
        self.stats = self.record.stats()
        payload = json.dumps({"type": "stats", **self.stats}, ensure_ascii=False)
        for p in self.people.values():
            for conn in p.connections:
                conn.send(payload)

    # ---------------------------------------------------------------------------------- broadcasting
    def changed(self) -> None:
        """Schedule one broadcast for all the changes made in this turn of the event loop."""
        if not self._dirty:
            self._dirty = True
            asyncio.get_running_loop().call_soon(self._broadcast)

    def public(self) -> dict[str, Any]:
        leader = self.leader
        return {
            "code": self.code, "mode": self.settings.mode, "phase": self.phase, "games": self.games,
            "leader": leader.name if leader else None,
            "people": [{"name": p.name, "connected": bool(p.connections), "absent": p.absent}
                       for p in self.people.values()],
            **self._fixed,
            "manual": self.manual if self.phase in ("sentence", "proposing", "confirm") else None,
            "game": self.view.public() if self.view is not None else None,
            "notice": self.notice,
        }

    def you(self, person: Person) -> dict[str, Any]:
        request = None
        found = self._seat_request(person)
        if found is not None:
            _, pending = found
            request = {"kind": pending["kind"], "round": pending["round"]}
        return {"name": person.name, "leader": person is self.leader, "absent": person.absent, "request": request}

    def _state_text(self, person: Person, public: str) -> str:
        """The public part is serialised once per broadcast; only ``you`` differs between people."""
        return f'{{"type":"state","room":{public},"you":{json.dumps(self.you(person), ensure_ascii=False)}}}'

    def _broadcast(self) -> None:
        self._dirty = False
        public = json.dumps(self.public(), ensure_ascii=False)
        for person in self.people.values():
            if person.connections:
                text = self._state_text(person, public)
                for conn in person.connections:
                    conn.send_state(text)

    def state_for(self, person: Person) -> str:
        return self._state_text(person, json.dumps(self.public(), ensure_ascii=False))
