"""One live room, whatever it plays: people, tokens, the lead, presence, saving, broadcasting, and the game.

Everything a person may do arrives through :meth:`Room.handle` and is checked
here or by the protocol's adapter (:mod:`lexicoord.web.adapters`): who may do it
(only the leader starts, ends, lets people go, hands over the lead), and the
adapter checks when and what. The lead: the first to join leads; the leader may
hand it over; when the leader has been away (no open page) for ``LEAD_AFTER``
seconds, anyone still playing may take it. A new leader is Player 1 from the
next game on; the game in progress keeps its seats, and the new leader may end
it or let the old leader go.

A game is any protocol's episode, played through :meth:`Room.play` with people
in their seats (:mod:`lexicoord.web.live`: journal, timeouts, interrupts) and
stored as an episode of the room's run. Every change is saved before it is
shown; each person receives the room as they may see it. This module imports no
protocol: the adapter names the protocol it plays.

A *managed* room belongs to a study (:mod:`lexicoord.studies`): its games start and end by the study's
schedule, never by a person (every leader's action is refused), and a person who leaves is replaced by a
model for the rest of the game (:meth:`Room.take_over`, and on a timed-out move when the study asks).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast
from typing import Protocol as Interface

from pydantic import BaseModel, Field, model_validator

from lexicoord.core.audience import Viewer
from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event
from lexicoord.core.protocol import Protocol
from lexicoord.core.seat import Request
from lexicoord.core.spec import AgentSpec, EpisodeSpec, Place
from lexicoord.core.takeover import SeatTakenOver
from lexicoord.runs.episode import play_episode
from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.web import messages as m
from lexicoord.web.adapters.base import CurrentGame, GameWatcher, RoomAdapter
from lexicoord.web.errors import RoomError
from lexicoord.web.frames import AgentSeen, PersonSeen, RoomSeen, YouSeen, merged, state_text, stats_of
from lexicoord.web.live import LiveRecorder, LiveSeats
from lexicoord.web.people import Person
from lexicoord.web.settings import RoomSettings, clean_name
from lexicoord.web.socket import REPLACED
from lexicoord.web.tokens import hash_token, new_token, token_matches

if TYPE_CHECKING:
    from lexicoord.web.connection import Connection
    from lexicoord.web.services import Services

log = logging.getLogger(__name__)
#: Seconds a leader may be away (no open page) before another person may take the lead.
LEAD_AFTER = 60.0


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


class RoomManager(Interface):
    """Who runs a managed room's schedule (a study): told when a game ends and when a seat is taken over."""

    def room_changed(self, room: Room) -> None: ...


class RoomState(BaseModel):
    """What a room saves: its people and lead (every room's) and its game (the adapter's own model)."""

    version: int = 1
    people: list[SavedPerson] = Field(default_factory=list)
    leader: str | None = None
    game: dict[str, Any] = Field(default_factory=dict)
    #: The network the room was created from (:func:`lexicoord.web.ratelimit.address_key`), so the cap on
    #: rooms per client holds across a restart; cleared when the room closes.
    creator: str | None = None
    managed: Managed | None = None

    @model_validator(mode="before")
    @classmethod
    def _first_layout(cls, data: Any) -> Any:
        """Rooms saved before states were versioned kept the game's fields beside the people."""
        if isinstance(data, dict) and "version" not in data and "game" not in data:
            game = {k: data[k] for k in ("phase", "cursor", "games", "current", "manual") if k in data}
            return {"version": 1, "people": data.get("people", []), "leader": data.get("leader"), "game": game}
        return data


class Room:
    def __init__(self, services: Services, room_id: str, code: str, run_id: str, settings: RoomSettings,
                 adapter: type[RoomAdapter]) -> None:
        self.services = services
        self.id = room_id
        self.code = code
        self.run_id = run_id
        self.settings = settings
        self.people: dict[str, Person] = {}
        self.notice: str | None = None
        self.stats: dict[str, Any] | None = None
        #: The game being played: its seats (wrapped for the room), people's own seats, its task.
        self.game: LiveSeats | None = None
        self.humans: dict[str, HumanSeat] = {}
        self.task: asyncio.Task[None] | None = None
        self.number: int | None = None
        self.ended = False
        self.lock = asyncio.Lock()
        self._dirty = False
        #: Who leads: the first to join, until the lead is handed over or taken.
        self.leader_name: str | None = None
        #: Seconds the leader must be away before someone else may take the lead.
        self.lead_after = LEAD_AFTER
        #: The agents seated in every game, built once: every broadcast sends them.
        self._agents = [AgentSeen(name=a.name, model=a.model) for a in settings.agents]
        #: The game in play, for views a person's own seat may see (:meth:`visible_to`).
        self.ctx: EpisodeContext | None = None
        #: Who hears the game in play (the adapter's, from :meth:`RoomAdapter.watch`).
        self.watcher: GameWatcher | None = None
        #: Since when no one has had a page of the room open (monotonic seconds; None while someone has).
        self.empty_since: float | None = time.monotonic()
        #: The client the room was created from (its network), counted against that client's share of rooms.
        self.creator: str | None = None
        #: A study's room: games by its schedule, and people who leave taken over by its model.
        self.managed: Managed | None = None
        self.manager: RoomManager | None = None
        #: The seats of the game in play that a model took over, by name.
        self.taken: dict[str, SeatTakenOver] = {}
        self.adapter = adapter(self)

    # ---------------------------------------------------------------------------------- saved state
    def saved_state(self) -> dict[str, Any]:
        people = [SavedPerson(name=p.name, token_hash=p.token_hash, joined_at=p.joined_at, absent=p.absent,
                              participant=p.participant) for p in self.people.values()]
        return RoomState(people=people, leader=self.leader_name, game=self.adapter.state.model_dump(mode="json"),
                         creator=self.creator, managed=self.managed).model_dump(mode="json")

    def restore(self, saved: dict[str, Any]) -> None:
        state = RoomState.model_validate(saved)
        for p in state.people:
            self.people[p.name] = Person(p.name, p.token_hash, p.joined_at, p.absent, p.participant)
        self.leader_name = state.leader
        self.creator = state.creator
        self.manage(state.managed)
        game = self.adapter.state = self.adapter.state_model.model_validate(state.game)
        if game.phase == "playing" and not game.current:  # marked as playing with nothing to play again: over
            game.phase = "over"

    async def save(self) -> None:
        await self.services.rooms.save_state(self.id, self.saved_state)

    def manage(self, managed: Managed | None) -> None:
        """Make the room a study's (or not): its pages then see only its own games of the study's run."""
        self.managed = managed
        if managed is not None:
            from lexicoord.web.own_games import OwnGames, ServicesView

            base = self.services.server if isinstance(self.services, ServicesView) else self.services
            self.services = cast("Services", ServicesView(base, OwnGames(base.store, managed.games)))

    async def resume(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        """After a restart: an interrupted game is played again from its journal, and a phase of the protocol's
        own is told the room came back (the coordination game's agents propose again)."""
        game = self.adapter.state
        if game.phase == "playing" and game.current:
            self._launch(game.current, replay)
        elif game.phase not in ("lobby", "over"):
            await self._begin_if(await self.adapter.move(None, m.Restarted()))
        await self.refresh_stats()

    # ------------------------------------------------------------------------------------- people
    def lineup(self) -> list[AgentSpec]:
        """A game's seats: the leader first (Player 1), then the other people present, then the agents."""
        leader = self.leader
        present = sorted((p for p in self.people.values() if not p.absent), key=lambda p: p is not leader)
        people = [AgentSpec(name=p.name, kind="human", options={"participant": p.participant} if p.participant else {})
                  for p in present]
        agents = [AgentSpec(name=a.name, model=a.model, options={"temperature": self.settings.temperature})
                  for a in self.settings.agents]
        return people + agents

    @property
    def leader(self) -> Person | None:
        if self.leader_name in self.people:
            return self.people[self.leader_name]
        return next(iter(self.people.values()), None)

    async def join(self, name: str, participant: str | None = None) -> tuple[Person, str]:
        """A new person in the room (a study's ``participant``); the first is Player 1, the coalition leader.
        Returns the secret token."""
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
        person = Person(name, hash_token(token), participant=participant)
        async with self.lock:
            self.people[name] = person
            if self.leader_name is None:
                self.leader_name = name
            await self.save()
        self.changed()
        return person, token

    async def reissue(self, name: str) -> str:
        """A new secret token for ``name`` (a study hands it to its participant's page): any older one stops
        working and the pages open with it are closed, so a seat is played from one page at a time."""
        person = self.people[name]
        token = new_token()
        async with self.lock:
            person.token_hash = hash_token(token)
            await self.save()
        for conn in list(person.connections):
            await conn.close(*REPLACED)
        return token

    def person_for(self, token: str) -> Person | None:
        for p in self.people.values():
            if token_matches(token, p.token_hash):
                return p
        return None

    def connect(self, person: Person, conn: Connection) -> None:
        person.connections.add(conn)
        person.away_since = None
        self.empty_since = None
        self.changed()

    def disconnect(self, person: Person, conn: Connection) -> None:
        person.connections.discard(conn)
        if not person.connections:
            person.away_since = time.time()
        if self.empty_since is None and not any(p.connections for p in self.people.values()):
            self.empty_since = time.monotonic()
        self.changed()

    def idle_for(self, now: float) -> float:
        """Seconds no one has had a page of the room open (0 while someone has)."""
        return 0.0 if self.empty_since is None else now - self.empty_since

    @property
    def played(self) -> bool:
        """A game has been started here (stored, under way, or cut short)."""
        return self.adapter.state.games > 0

    @property
    def busy(self) -> bool:
        """A game (or manual mode's proposals) is under way: it ends by itself as its moves time out."""
        return self.task is not None and not self.task.done()

    async def close_connections(self, code: int, reason: str) -> None:
        """Close every open page of the room, saying why."""
        for conn in [c for p in self.people.values() for c in p.connections]:
            await conn.close(code, reason)

    # ------------------------------------------------------------------------------------ handling
    async def handle(self, person: Person, msg: m.Inbound) -> None:
        """Act on one validated message from ``person``; :class:`RoomError` if the room refuses it."""
        if self.managed is not None and isinstance(msg, (m.TakeLead, m.Start, m.EndGame, m.Drop, m.HandOver,
                                                         *self.adapter.leader_messages)):
            raise RoomError("managed", "In a study, games start and end on the study's schedule.")
        if isinstance(msg, m.TakeLead):
            async with self.lock:
                await self._take_lead(person)
        elif isinstance(msg, (m.Start, m.EndGame, m.Drop, m.HandOver, *self.adapter.leader_messages)):
            if person is not self.leader:
                raise RoomError("not_leader", "Only the leader (Player 1) can do that.")
            async with self.lock:
                if isinstance(msg, m.Start):
                    await self._start()
                elif isinstance(msg, m.EndGame):
                    await self._end(person, msg)
                elif isinstance(msg, m.Drop):
                    await self._drop(msg.name)
                elif isinstance(msg, m.HandOver):
                    await self._hand_over(msg.name)
                else:
                    await self._begin_if(await self.adapter.move(person, msg))
        else:
            await self._begin_if(await self.adapter.move(person, msg))
            return  # a move shows itself through the seat's listener and the journal's move_done
        self.changed()

    def seat_viewer(self, person: Person) -> Viewer:
        """Who ``person`` is to the game in play: their seat with its groups (the wolves ...), else only a name."""
        return self.ctx.viewer(person.name) if self.ctx is not None else Viewer(name=person.name)

    @property
    def game_spec(self) -> EpisodeSpec | None:
        """The spec of the game in play (or last played since the server started)."""
        return self.ctx.spec if self.ctx is not None else None

    def events_for(self, viewer: Viewer) -> list[Event]:
        """The events of the game in play that ``viewer`` may see (for a seat, see :meth:`seat_viewer`)."""
        return self.ctx.recorder.visible_to(viewer) if self.ctx is not None else []

    def visible_to(self, person: Person) -> list[Event]:
        """The events of the game in play that ``person``'s seat may see (an adapter's per-person view)."""
        return self.ctx.visible_to(person.name) if self.ctx is not None else []

    def seat_request(self, person: Person) -> tuple[HumanSeat, Request] | None:
        """The request ``person``'s seat is waiting to answer, if any."""
        if self.game is None:
            return None
        seat = self.humans.get(person.name)
        if seat is None or not seat.waiting or seat.pending is None:
            return None
        return seat, seat.pending

    async def _drop(self, name: str) -> None:
        person = self.people.get(name)
        if person is None or person is self.leader:
            raise RoomError("no_such_person", "The leader can let go any other person in the room, by name.")
        person.absent = True
        if self.game is not None and name in self.game.live:
            await self.game.live[name].leave(f"{name} left the room")
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

    # ------------------------------------------------------------------------------------ the game
    async def start_next(self) -> bool:
        """A managed room's next game, begun by its study; False if one is under way already."""
        async with self.lock:
            if self.adapter.state.phase not in ("lobby", "over") or self.busy:
                return False
            await self._start()
        self.changed()
        return True

    async def take_over(self, name: str, reason: str) -> bool:
        """A model plays ``name``'s seat for the rest of the game in play (a managed room's, with the study's
        model); False if there is no such person's seat in play, or it was taken over already."""
        if self.managed is None or self.game is None or not self.busy:
            return False
        seat = self.game.live.get(name)
        return seat is not None and await seat.take_over(self.managed.model, reason)

    async def _start(self) -> None:
        """The leader's ``start``: the adapter's next game, or a phase of its own before one."""
        if self.adapter.state.phase not in ("lobby", "over"):
            raise RoomError("wrong_phase", "A game is already under way.")
        spec = await self.adapter.start(self.adapter.state.games + 1, self.lineup())
        if spec is None:  # a phase of the protocol's own opened
            await self.save()
        await self._begin_if(spec)

    async def _begin_if(self, spec: EpisodeSpec | None) -> None:
        """Begin the game the adapter gave (the next by number), saved before it is played; nothing if none."""
        if spec is None:
            return
        game = self.adapter.state
        game.games += 1
        # Where the game is played is part of its identity: another room (another group of a study) that plays
        # the same item with the same seats plays another episode of the run, never this one.
        managed = self.managed
        spec = spec.model_copy(update={"place": Place(
            room=self.id, game=game.games, group=managed.group if managed else None,
            condition=managed.condition if managed else None)})
        game.current = CurrentGame(number=game.games, spec=spec, seed=spec.seed(self.settings.seed or 0))
        if self.managed is not None:
            self.managed.games.append(spec.key)
        game.phase = "playing"
        self.notice = None
        await self.save()
        self._launch(game.current, {})

    async def _end(self, person: Person, msg: m.EndGame) -> None:
        """The leader's ``end_game``: the game in play ends at once; a phase of the protocol's own is its to end."""
        phase = self.adapter.state.phase
        if phase == "playing" and self.interrupt_game("the leader ended the game"):
            return
        if phase in ("lobby", "over", "playing"):
            raise RoomError("wrong_phase", "No game is being played.")
        await self._begin_if(await self.adapter.move(person, msg))

    def _launch(self, current: CurrentGame, replay: dict[str, list[dict[str, Any]]]) -> None:
        watch = self.adapter.watch(current)
        self.watcher = watch.watcher
        self.play(watch.rules, current.spec, current.number, current.seed, replay)

    def _over(self) -> None:
        game = self.adapter.state
        game.phase, game.current = "over", None

    @property
    def clock(self) -> tuple[str | None, int | None]:
        """The phase and round the game in play is in (as its events are stamped), for the pages."""
        if self.ctx is None:
            return None, None
        return self.ctx.recorder.phase, self.ctx.recorder.round

    def play(self, protocol: Protocol, spec: EpisodeSpec, number: int, seed: int,
             replay: dict[str, list[dict[str, Any]]]) -> None:
        """Play ``spec`` under ``protocol`` with people in their seats; the adapter hears every step."""
        seats = {a.name: HumanSeat(a.name, timeout=self.settings.seat_timeout) for a in spec.lineup if a.kind == "human"}
        for seat in seats.values():
            # A request is shown as it opens; its end is shown by move_done once the journal has the
            # move, so a vote costs one full-room broadcast, not two.
            seat.listener = lambda seat=seat: self.changed() if seat.waiting else None
        self.humans = seats
        self.number = number
        self.ended = False
        base = SeatFactory(self.services.models, people=seats, own_kinds=protocol.seat_kinds)
        managed = self.managed
        self.taken = {}
        self.game = LiveSeats(base, self, replay, self.settings.agent_timeout, takeover=managed is not None,
                              on_idle=managed.model if managed is not None and managed.on_idle else None,
                              agent_options={"temperature": self.settings.temperature})
        self.run_task(self._play(protocol, spec, number, seed))

    def interrupt_game(self, reason: str) -> bool:
        """End the game in play: pending moves end at once and the protocol is told to stop."""
        if self.game is None or self.task is None or self.task.done():
            return False
        self.ended = True
        for seat in self.game.live.values():
            seat.interrupt(reason)
        return True

    def run_task(self, coro: Coroutine[Any, Any, None]) -> None:
        self.task = asyncio.create_task(coro)
        self.task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("room %s: %s", self.code, task.exception(), exc_info=task.exception())
            self.notice = "The server hit an error in this game; the leader can start the next one."
            # Over for good: not replayed after a restart (its journal stays for the audit).
            self._over()
            asyncio.get_running_loop().create_task(self.save())
            self.changed()

    async def _play(self, protocol: Protocol, spec: EpisodeSpec, number: int, seed: int) -> None:
        assert self.game is not None
        ctx = self.ctx = EpisodeContext(spec=spec, seed=seed, make_seat=self.game, recorder=LiveRecorder(self),
                                        control=self.game.control())
        record, events = await play_episode(protocol, ctx, self.run_id, position=number)
        try:
            record.id = await self.services.rooms.call(self.services.store.save_episode, record, events)
            await self.services.rooms.call(self.services.store.set_run_status, self.run_id, "open")
            await self.services.rooms.clear_moves(self.id, number)
        except Exception:  # the store is gone: keep the room up and say so
            log.exception("room %s: game %s could not be saved", self.code, number)
            self.notice = "This game could not be saved; it will be played again after a restart."
            self.changed()
            return
        async with self.lock:
            self._over()
            await self.save()
        await self._send_stats(await self.adapter.summary((record, events)))
        self.changed()
        if self.manager is not None:
            self.manager.room_changed(self)

    # ------------------------------------------------------------------------- hooks of the live game
    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None:
        if self.watcher is not None:
            self.watcher.move_started(name, kind, round_, deadline, self.clock[0])
        self.changed()

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        if self.watcher is not None:
            self.watcher.move_done(name, kind, round_, failure)
        self.changed()

    def on_event(self, event: Event) -> None:
        if self.watcher is not None:
            self.watcher.on_event(event)
        self.changed()

    def end_requested(self) -> bool:
        return self.ended

    def taken_over(self, event: SeatTakenOver) -> None:
        """A model took a person's seat over: recorded in the game, shown, and told to the study."""
        self.taken[str(event.agent)] = event
        if self.ctx is not None:
            self.ctx.recorder.emit(event)
        self.changed()
        if self.manager is not None:
            self.manager.room_changed(self)

    async def record_move(self, name: str, idx: int, entry: dict[str, Any]) -> None:
        if self.number is not None:
            await self.services.rooms.add_move(self.id, self.number, name, idx, entry)

    # ---------------------------------------------------------------------------------- statistics
    async def refresh_stats(self) -> None:
        await self._send_stats(await self.adapter.summary())

    async def _send_stats(self, stats: dict[str, Any]) -> None:
        self.stats = stats
        payload = stats_of(stats).text()
        for p in self.people.values():
            for conn in p.connections:
                conn.send(payload)

    # ---------------------------------------------------------------------------------- broadcasting
    def changed(self) -> None:
        """Schedule one broadcast for all the changes made in this turn of the event loop and the next.

        The next turn too, because a change often wakes tasks whose first step is a change of its own: a
        round that opens starts every seat's move in one turn, and each person's request opens when their
        seat's task first runs, a turn later. Broadcast at once, the room would send every page the moves
        started and then, a turn later, the requests: two frames for one change anyone could see."""
        if not self._dirty:
            self._dirty = True
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self._broadcast)

    def _own(self) -> RoomSeen:
        """The room's own part of what everyone sees (the adapter's part goes beside it)."""
        leader = self.leader
        return RoomSeen(
            code=self.code, protocol=self.adapter.protocol, agents=self._agents,
            leader=leader.name if leader else None,
            people=[PersonSeen(name=p.name, connected=bool(p.connections), absent=p.absent, played_by=self._played_by(p))
                    for p in self.people.values()],
            notice=self.notice, managed=self.managed is not None,
        )

    def _played_by(self, person: Person) -> str | None:
        """The model playing ``person``'s seat: one that took it over in the game in play (or the one just
        played). After a restart the takeover is replayed only when the game reaches it again, so a study's
        person marked absent (which a managed room does only once a model took their seat) whose seat is at the
        table being replayed is shown as the study's model's already. Later games leave that seat out: None."""
        taken = self.taken.get(person.name)
        if taken is not None:
            return taken.by
        if self.managed is None or not person.absent:
            return None
        current = self.adapter.state.current
        seated = current is not None and any(a.name == person.name for a in current.spec.lineup)
        return self.managed.model if seated else None

    def public(self) -> RoomSeen:
        """What everyone sees, as one model (the room's own part and the adapter's, key for key)."""
        return RoomSeen(**self._own().model_dump(), **self.adapter.view(None).model_dump(mode="json"))

    def public_text(self) -> str:
        """What everyone sees, as the JSON every ``state`` frame carries: built and serialised once per broadcast."""
        return merged(self._own(), self.adapter.view(None))

    def you(self, person: Person) -> YouSeen:
        return YouSeen(**self._own_you(person).model_dump(), **self.adapter.view(person).model_dump(mode="json"))

    def _own_you(self, person: Person) -> YouSeen:
        return YouSeen(name=person.name, leader=person is self.leader, absent=person.absent)

    def you_text(self, person: Person) -> str:
        """What only ``person`` sees, as JSON: built from that person's own view alone."""
        return merged(self._own_you(person), self.adapter.view(person))

    def _broadcast(self) -> None:
        self._dirty = False
        people = [p for p in self.people.values() if p.connections]
        if not people:  # no page open: nothing to build
            return
        public = self.public_text()
        for person in people:
            text = state_text(public, self.you_text(person))
            for conn in person.connections:
                conn.send_state(text)

    def state_for(self, person: Person) -> str:
        return state_text(self.public_text(), self.you_text(person))
