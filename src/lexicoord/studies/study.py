"""A study being served: its participants, its lobby, its groups' rooms, and the experimenter's controls.

Everything here runs on the server's one event loop, and every decision that must happen once (a group
formed from the lobby, an outcome given) is taken in code with no ``await`` between looking and marking,
so two requests in the same instant can never both take it: a participant is in one group or none, and
gets one code. Each change is saved (:class:`~lexicoord.studies.persistence.StudyStore`) before anyone is
told of it. A ticker looks at the lobby and the groups' rooms every half second, so the schedule holds
after a restart as it did before: a game cut short is replayed by its room, the next game starts, a group
whose games are done moves on to the survey.

A group's games are played in a *managed* room (:mod:`lexicoord.web.room`): people cannot start or end
games there, and a person away past the grace period (or idle past a move's limit, if the study says so)
is taken over by the group's model for the rest of the game; that participant's session ends with the
``dropped`` code, and later games of the group are played without their seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.studies.assignment import deal
from lexicoord.studies.file import Outcome, StudyFile
from lexicoord.studies.participant import Dropped, Participant, StageError, answer, finish, following
from lexicoord.studies.persistence import StudyStore
from lexicoord.web.errors import RoomError
from lexicoord.web.room import Room
from lexicoord.web.room_state import Managed
from lexicoord.web.tokens import hash_token, new_token, token_matches

if TYPE_CHECKING:
    from lexicoord.web.registry import Rooms

log = logging.getLogger(__name__)
#: A study file's keys that make its games (the run's settings): never changed within a study.
GAME_KEYS = ("protocol", "game", "seed", "items", "group.people", "group.agents")
#: Characters an experimenter's own key (``LEXICOORD_ADMIN_KEY``) has at least when the dashboard is reachable
#: from other machines.
MIN_PUBLIC_KEY = 16
#: Seconds between the ticker's looks at the lobby and the groups.
TICK = 0.5
#: Seconds the pages have, after the server starts, to reconnect before anyone's absence counts: a restart
#: finds everyone away, and a page retries its connection with a growing delay (up to 5 s apart).
RECONNECT = 15.0
#: Seconds a group's room may keep failing to open (the store away, the server full) before its people are
#: sent home with the no-group code instead of waiting on a page that never moves.
ROOM_PATIENCE = 30.0
#: Seconds since a lobby page was last heard from (its long poll comes back every 25 s) after which its
#: participant is taken to have left: they are not put in a group their partners would play without them.
PRESENCE = 40.0
#: A participant's token after the experimenter let their id in again: no token matches it.
RELEASED = "released"


class Game(BaseModel):
    number: int
    #: The game's episode key in the study's run (its place, the group's room and the game's number, is part of
    #: it: every group's games are episodes of their own).
    key: str


class GroupRecord(BaseModel):
    id: str
    #: Participant ids in seat order (the first is the game's Player 1).
    members: list[str]
    seats: dict[str, str]
    #: Seats the lobby filled with the group's model at its timeout.
    filled: list[str] = Field(default_factory=list)
    #: The condition the group was assigned (None: the study has no conditions).
    condition: str | None = None
    room: str | None = None
    formed_at: float
    status: Literal["forming", "playing", "finished"] = "forming"
    games: list[Game] = Field(default_factory=list)
    #: Why the group's game could not start (its room refused the table), if it could not.
    error: str | None = None
    #: When its room first failed to open (None: it never failed, or it opened).
    failing_since: float | None = None


class StudyState(BaseModel):
    status: Literal["open", "paused", "ended"] = "open"
    lobby_open: bool = True
    arrivals: int = 0
    groups: dict[str, GroupRecord] = Field(default_factory=dict)
    #: How far the conditions' sequence has been dealt (:mod:`lexicoord.studies.assignment`).
    assigned: int = 0
    #: Conditions the experimenter closed: no new group is assigned them.
    closed: list[str] = Field(default_factory=list)


class Study:
    def __init__(self, file: StudyFile, store: StudyStore, clock: Callable[[], float] = time.time) -> None:
        self.file = file
        self.store = store
        self.clock = clock
        self.state = StudyState()
        self.participants: dict[str, Participant] = {}
        self.rooms: Rooms | None = None
        #: Who is waiting for a participant's next change (their page's long poll), and for any change (the
        #: dashboard's).
        self._watchers: dict[str, list[asyncio.Future[None]]] = {}
        #: Grows with every change; from the clock, so a dashboard polling across a restart never goes back.
        self.version = int(time.time() * 1000)
        self.started = time.time()
        self._started_mono = time.monotonic()
        self.reconnect = RECONNECT
        #: The server is stopping: waits end now, and no one's absence counts (their pages lose the server).
        self.closing = False
        self._ticker: asyncio.Task[None] | None = None
        self._busy: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        #: When each participant's page was last heard from (monotonic seconds; pages, not the study's clock).
        self._seen: dict[str, float] = {}
        #: The file's keys that differ from the stored file's, accepted but not yet recorded (see adopt_file).
        self.accepted_changes: list[str] = []

    # ---------------------------------------------------------------------------------- start and stop
    def load(self, accept_changes: bool = False, check: bool = True) -> None:
        """The study as the store has it. A file changed since the study was first served (other codes, another
        group size, a new quiz) would treat the participants who came before by other rules than those after
        them: refused, naming what changed, unless ``accept_changes`` (the new file is then recorded)."""
        saved, people = self.store.load()
        if saved is not None:
            self.state = StudyState.model_validate(saved)
        self.participants = {p.pid: p for p in people}
        config = self.file.model_dump(mode="json")
        # Compared before anything is replaced: a file refused below leaves the one the study was served with.
        before = self.store.open(config, self.state.model_dump(mode="json"))
        changed = changed_keys(by_name(before), by_name(config)) if before is not None and check else []
        begun = {g.condition for g in self.state.groups.values() if g.condition}
        fixed = [k for k in changed if any(k == g or k.startswith(f"{g}.") for g in GAME_KEYS)
                 or k.split(".")[:2] in (["conditions", c] for c in begun)]
        if fixed:  # every group's games are one run, which a report reads under one set of settings
            raise ConfigError(f"The study file changes the games of study '{self.file.name}' since it was first served "
                              f"(at {', '.join(fixed[:8])}); all of a study's games (all of a condition's, once "
                              "it has begun) are played under the same settings, so give the changed study a new "
                              "name.")
        if changed and not accept_changes:
            shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
            raise ConfigError(f"The study file differs from the one study '{self.file.name}' was first served with "
                              f"({len(self.participants)} participant(s) so far) at {shown}; serve it with "
                              "--accept-changes to go on under the new file, or give the study a new name.")
        self.accepted_changes = changed  # recorded by adopt_file, once the run has taken the file too

    def adopt_file(self) -> None:
        """Record a changed file (accepted by :meth:`load`) as the study's, once everything else has taken it."""
        if self.accepted_changes:
            self.store.open(self.file.model_dump(mode="json"), self.state.model_dump(mode="json"), replace=True)
            log.warning("study %s: going on under a changed file (%s)", self.file.name,
                        ", ".join(self.accepted_changes))
            self.accepted_changes = []

    async def start(self, rooms: Rooms) -> None:
        """Find the groups' rooms again (reopened by the server before this) and start the schedule."""
        self.rooms = rooms
        self.started = time.time()
        self._started_mono = time.monotonic()
        for group in self.state.groups.values():
            room = rooms.get(group.room) if group.room else None
            if room is not None:
                room.manager = self
        self._ticker = asyncio.create_task(self._tick_forever())

    def stopping(self) -> None:
        self.closing = True
        for pid in list(self._watchers):
            self._tell(pid or None)

    async def stop(self) -> None:
        self.closing = True
        for task in [*self._tasks, *([self._ticker] if self._ticker else [])]:
            task.cancel()
        for task in [*self._tasks, *([self._ticker] if self._ticker else [])]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.store.flushed()

    # ---------------------------------------------------------------------------------- participants
    async def enter(self, pid: str, token: str | None, study_ref: str | None = None,
                    session: str | None = None) -> tuple[Participant, str | None]:
        """The participant ``pid`` opening the study: a new session (and its secret token), or theirs again
        with the token their browser kept. Someone else's id without its token is refused."""
        p = self.participants.get(pid)
        if p is not None:
            if token is not None and token_matches(token, p.token_hash):
                self.heard(p)
                return p, None
            # Another browser: theirs only with the session id of their link (Prolific's SESSION_ID, which only
            # that participant's link carries) or once the experimenter let the id in again. The new browser
            # takes the session over; the old one's token stops working.
            same_session = session is not None and p.session is not None and hmac.compare_digest(session, p.session)
            if not (same_session or p.token_hash == RELEASED):
                raise StageError("in_use", "This participant id has already begun the study in another browser; "
                                           "go back to that browser, or write to the researcher.", 409)
            token = new_token()
            p.token_hash = hash_token(token)
            await self._saved(p)
            self.heard(p)
            return p, token
        if self.state.status != "open":
            raise StageError("closed", "This study is not taking participants now; please come back later."
                             if self.state.status == "paused" else "This study has ended.", 403)
        token = new_token()
        now = self.clock()
        p = self.participants[pid] = Participant(pid=pid, study_ref=study_ref, session=session,
                                                 token_hash=hash_token(token))
        p.move_to("consent", now)
        await self._saved(p)
        self.heard(p)
        return p, token

    def participant(self, pid: str, token: str) -> Participant:
        p = self.participants.get(pid)
        if p is None or not token_matches(token, p.token_hash):
            raise StageError("unknown", "This page's session is unknown here (or was opened in another browser "
                                        "since); open the study from your link.", 401)
        self.heard(p)
        return p

    def heard(self, p: Participant) -> None:
        """``p``'s page is there now (each of its calls says so, and each long poll as it ends)."""
        self._seen[p.pid] = time.monotonic()

    def present(self, p: Participant) -> bool:
        """Whether ``p``'s page has been heard from lately (after a start, everyone's is, until it has had time
        to come back)."""
        last = max(self._seen.get(p.pid, 0.0), self._started_mono)
        return time.monotonic() - last < PRESENCE

    async def submit(self, p: Participant, stage: str, body: dict[str, Any]) -> dict[str, Any]:
        """The participant's answer to their stage (checked by :func:`answer`), saved before it is told."""
        if self.state.status == "ended" and p.stage != "survey":
            raise StageError("closed", "This study has ended.", 403)
        told = answer(self.file, p, stage, body, self.clock())
        arrived = p.stage == "lobby"
        if arrived:
            self._arrive(p)
        # An arrival that completes a group is saved with the group, in one transaction: the answer is still
        # stored before the reply, and the page waits for one commit, not two one after the other.
        moved, formed = self._group_lobby() if p.stage == "lobby" else ([], [])
        await self._saved(p, *(m for m in moved if m is not p), state=arrived)
        self._open_rooms(formed)
        return told

    def _arrive(self, p: Participant) -> None:
        if p.arrival is None:
            p.arrival = self.state.arrivals
            self.state.arrivals += 1
        if not self.state.lobby_open or self.state.status == "ended":
            finish(self.file, p, "no_group", self.clock())

    async def _saved(self, *people: Participant, state: bool = False) -> None:
        """Save ``people`` (and the study's own state, when it changed), then wake whoever waits on them."""
        await self.store.save(people, self._state_now if state else None)
        for p in people:
            self._tell(p.pid)
        self._tell(None)

    def _state_now(self) -> dict[str, Any]:
        return self.state.model_dump(mode="json")

    def _tell(self, pid: str | None) -> None:
        """Wake the long polls waiting on ``pid`` (None: the dashboard's)."""
        self.version += 1
        for w in self._watchers.pop(pid or "", []):
            if not w.done():
                w.set_result(None)

    async def wait(self, pid: str | None, timeout: float) -> None:
        """Until ``pid``'s session (None: anything) changes, or ``timeout`` seconds (no wait while stopping)."""
        if self.closing:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = self._watchers.setdefault(pid or "", [])
        waiting.append(fut)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(fut, timeout)
        finally:  # a page that polls on and on with nothing changing leaves nothing behind
            if fut in waiting:
                waiting.remove(fut)
            if not waiting and self._watchers.get(pid or "") is waiting:
                del self._watchers[pid or ""]

    async def seat_token(self, p: Participant) -> tuple[str, str]:
        """The room code and a fresh token for ``p``'s seat in their group's game."""
        group = self.state.groups.get(p.group or "")
        room = self.rooms.get(group.room) if self.rooms and group and group.room else None
        if p.stage != "game" or room is None or p.seat is None:
            raise StageError("no_game", "Your game is not ready; this page will move on by itself.")
        return room.code, await room.reissue(p.seat)

    # ---------------------------------------------------------------------------------- the lobby
    def waiting(self) -> list[Participant]:
        return sorted((p for p in self.participants.values() if p.stage == "lobby"), key=lambda p: p.arrival or 0)

    async def form_groups(self) -> None:
        """Group the lobby in arrival order; at the timeout, fill a short group with agents or send it home."""
        moved, formed = self._group_lobby()
        if moved:
            await self._saved(*moved, state=bool(formed))
        self._open_rooms(formed)

    def _group_lobby(self) -> tuple[list[Participant], list[GroupRecord]]:
        """The lobby's groups claimed, and the short ones at the timeout filled or sent home, with nothing awaited
        (no one can be taken twice); the participants this moved and the groups it formed, to be saved before
        anyone is told."""
        if self.state.status != "open":
            return [], []
        size = self.file.group.people
        now = self.clock()
        waiting: list[Participant] = []
        gone: list[Participant] = []
        for p in self.waiting():  # a page gone from the lobby is not grouped; at the timeout it gets its code
            (waiting if self.present(p) else gone).append(p)
        formed: list[GroupRecord] = []
        while len(waiting) >= size:
            formed.append(self._claim(waiting[:size], fill=0))
            waiting = waiting[size:]
        timed_out = [p for p in waiting if now - p.entered["lobby"] >= self.file.lobby.timeout]
        sent_home = [p for p in gone if now - p.entered["lobby"] >= self.file.lobby.timeout]
        if timed_out and self.file.lobby.fill_with_agents:
            formed.append(self._claim(waiting, fill=size - len(waiting)))
        else:
            sent_home += timed_out
        for p in sent_home:
            finish(self.file, p, "no_group", now)
        return [*sent_home, *(self.participants[m] for g in formed for m in g.members)], formed

    def _open_rooms(self, formed: list[GroupRecord]) -> None:
        """Rooms open in the background: the answer that completed a group is not kept waiting for them."""
        for group in formed:
            self._spawn(self._open_room(group))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the requests, kept until done, its failure logged (the ticker tries again)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("study %s: %s", self.file.name, t.exception(), exc_info=t.exception())

        task.add_done_callback(done)

    def _claim(self, members: list[Participant], fill: int) -> GroupRecord:
        """Mark ``members`` as one group, at once, and deal it its condition (nothing is awaited here: no one else
        can take them, and no other group can be dealt the same place of the sequence)."""
        now = self.clock()
        gid = f"g{len(self.state.groups) + 1}"
        seats = {p.pid: f"Person {i}" for i, p in enumerate(members, start=1)}
        condition = self._deal()
        group = GroupRecord(id=gid, members=[p.pid for p in members], seats=seats, formed_at=now,
                            filled=[f"Stand-in {i}" for i in range(1, fill + 1)], condition=condition)
        self.state.groups[gid] = group
        for p in members:
            p.group, p.seat, p.condition = gid, seats[p.pid], condition
            p.move_to("game", now)
        return group

    def _deal(self) -> str | None:
        """The next group's condition (None: the study has none)."""
        if not self.file.conditions:
            return None
        dealt = deal([(c.name, c.weight) for c in self.file.conditions], self.file.seed, self.state.assigned,
                     self.state.closed)
        assert dealt is not None, "the last open condition cannot be closed"
        name, self.state.assigned = dealt
        return name

    def open_conditions(self) -> list[str]:
        return [c.name for c in self.file.conditions if c.name not in self.state.closed]

    async def _open_room(self, group: GroupRecord) -> None:
        """The group's room: its people joined in seat order, the study's manager on it, its first game begun.
        A room that cannot be made now is tried again at the next tick (the group stays formed)."""
        if self.rooms is None or group.id in self._busy:
            return
        self._busy.add(group.id)
        try:
            await self._make_room(group)
        except Exception as exc:
            log.exception("study %s: the room of group %s could not be opened", self.file.name, group.id)
            now = self.clock()
            if group.failing_since is None:
                group.failing_since = now
                await self._saved(state=True)
            elif now - group.failing_since >= ROOM_PATIENCE:
                group.error = f"its room could not be opened for {ROOM_PATIENCE:g} s ({str(exc)[:200]})"
                await self._finish_group(group, unplayed=True)
        finally:
            self._busy.discard(group.id)

    async def _make_room(self, group: GroupRecord) -> None:
        assert self.rooms is not None
        stand_in = self.file.stand_in(group.condition)
        agents = [(a.name, a.model) for a in self.file.agents(group.condition)]
        agents += [(name, stand_in) for name in group.filled]
        managed = Managed(study=self.file.name, model=stand_in, on_idle=self.file.dropout.idle, group=group.id,
                          condition=group.condition)
        room = await self.rooms.create(self.file.room_body(agents, group.condition), managed=managed,
                                       run=self.file.run_id)
        room.manager = self
        await room.join_all([(group.seats[pid], pid) for pid in group.members])
        group.room, group.status = room.code, "playing"
        await self._saved(state=True)
        await self._next_game(group, room)
        for pid in group.members:
            self._tell(pid)

    # ---------------------------------------------------------------------------------- the groups
    def room_changed(self, room: Room) -> None:
        """A managed room's game ended or a seat was taken over: look at its group now, not at the next tick."""
        group = next((g for g in self.state.groups.values() if g.room == room.code), None)
        if group is not None:
            self._spawn(self._look(group))

    async def _look(self, group: GroupRecord) -> None:
        """Bring one group up to date with its room (one look at a time per group)."""
        if group.id in self._busy or group.status != "playing" or self.rooms is None:
            return
        self._busy.add(group.id)
        try:
            room = self.rooms.get(group.room or "")
            if room is None:  # closed by the operator: its people have played what they could
                await self._finish_group(group)
                return
            await self._games_of(group, room)
            await self._dropouts(group, room)
            if not room.busy and room.phase in ("lobby", "over"):
                await self._next_game(group, room)
        finally:
            self._busy.discard(group.id)

    async def _dropouts(self, group: GroupRecord, room: Room) -> None:
        if self.closing:
            return
        now = self.clock()
        changed = []
        for pid in group.members:
            p = self.participants[pid]
            person = room.people.get(p.seat or "")
            if p.outcome is not None or person is None:
                continue
            taken = room.taken.get(person.name)
            away = person.away_since is not None and \
                time.time() - max(person.away_since, self.started + self.reconnect) >= self.file.dropout.grace
            if taken is None and away and room.busy:
                await room.take_over(person.name, "disconnected")
                taken = room.taken.get(person.name)
            if taken is not None:
                p.dropped = Dropped(at=now, reason=taken.reason, game=room.games)
                person.absent = True  # the group's later games are played without this seat
                finish(self.file, p, "dropped", now)
                changed.append(p)
        if changed:
            await room.save()
            await self._saved(*changed)

    async def _next_game(self, group: GroupRecord, room: Room) -> None:
        """The group's next game, or, with its games played (or no participant left), the survey."""
        played = room.games
        left = [pid for pid in group.members if self.participants[pid].outcome is None]
        if played >= self.file.group.games or not left or self.ended:
            await self._finish_group(group)
            return
        try:
            started = await room.start_next()
        except (RoomError, LexicoordError) as exc:  # the protocol refuses this table (too few players for its roles ...)
            log.error("study %s: group %s cannot play: %s", self.file.name, group.id, exc)
            group.error = str(exc)
            # A group that played before (a dropout left its table too small) goes on to the survey.
            await self._finish_group(group, unplayed=not group.games)
            return
        if started:
            if self.ended:  # the study ended while this game was being begun (an await ago): it ends too
                self._end_game(group)
            await self._games_of(group, room)
            for pid in left:
                self._tell(pid)

    async def _games_of(self, group: GroupRecord, room: Room) -> None:
        """The group's record of its games brought up to the room's own list, which the room saves before a game
        is played: a crash between the two saves leaves no game out of the group's record (nor its bonus)."""
        keys = room.managed.games if room.managed is not None else []
        if len(keys) > len(group.games):
            group.games += [Game(number=n, key=k) for n, k in enumerate(keys, start=1)][len(group.games):]
            await self._saved(state=True)

    @property
    def ended(self) -> bool:
        """The experimenter ended the study (read afresh after each await: it may end while a game is begun)."""
        return self.state.status == "ended"

    async def _finish_group(self, group: GroupRecord, unplayed: bool = False) -> None:
        """The group's games are over: its players go on to the survey (or, if its game could not even start,
        home with the no-group code)."""
        group.status = "finished"
        now = self.clock()
        moved = []
        for pid in group.members:
            p = self.participants[pid]
            if p.stage == "game" and p.outcome is None:
                if unplayed:
                    finish(self.file, p, "no_group", now)
                elif following(self.file, "game") == "done":
                    finish(self.file, p, "completed", now)
                else:
                    p.move_to("survey", now)
                moved.append(p)
        await self._saved(*moved, state=True)
        room = self.rooms.get(group.room) if self.rooms is not None and group.room else None
        if self.rooms is not None and room is not None and not room.busy:
            await self.rooms.close(room, "the group's games are over")  # stored; the server keeps no unused room

    async def _tick_forever(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:  # one bad look must not stop the schedule
                log.exception("study %s: the schedule's look failed", self.file.name)
            await asyncio.sleep(TICK)

    async def tick(self) -> None:
        if self.waiting():
            await self.form_groups()
        for group in list(self.state.groups.values()):
            if group.status == "forming" and group.room is None and self.rooms is not None:
                await self._open_room(group)  # formed, then the server stopped before its room was made
            elif group.status == "playing":
                await self._look(group)

    # ---------------------------------------------------------------------------------- the experimenter
    async def control(self, action: str, group: object = None, participant: object = None,
                      condition: object = None) -> str:
        """An experimenter's action from the dashboard; a sentence saying what was done."""
        now = self.clock()
        if action == "close_lobby":
            self.state.lobby_open = False
            waiting = self.waiting()
            for p in waiting:
                finish(self.file, p, "no_group", now)
            await self._saved(*waiting, state=True)
            return f"The lobby is closed; {len(waiting)} waiting participant(s) got the no-group code."
        if action in ("pause", "resume"):
            if self.state.status == "ended":
                raise StageError("ended", "The study has ended; it cannot be paused or opened again.", 409)
            self.state.status = "paused" if action == "pause" else "open"
            await self._saved(state=True)
            return "The study is paused: no one new may begin, and no group forms." if action == "pause" \
                else "The study is open again."
        if action == "end_study":
            self.state.status, self.state.lobby_open = "ended", False
            early = [p for p in self.participants.values() if p.stage in ("consent", "instructions", "quiz", "lobby")]
            for p in early:
                finish(self.file, p, "no_group", now)
            ended = sum(self._end_game(g) for g in self.state.groups.values() if g.status == "playing")
            await self._saved(*early, state=True)
            return (f"The study has ended: {len(early)} participant(s) not yet in a game got the no-group code; "
                    f"{ended} game(s) under way were ended, and their players go on to the survey.")
        if action == "release":
            held = self.participants.get(participant) if isinstance(participant, str) else None
            if held is None:
                raise StageError("no_participant", "No participant has that id.", 404)
            if held.outcome is not None:
                raise StageError("ended", "That participant's session has ended; their link shows their code.", 409)
            held.token_hash = RELEASED
            await self._saved(held)
            return f"{held.pid} may open their link again in any browser; the page they had stops working."
        if action in ("close_condition", "open_condition"):
            return await self._condition_control(action, condition)
        if action == "end_game":
            found = self.state.groups.get(group) if isinstance(group, str) else None
            if found is None or found.status != "playing":
                raise StageError("no_group", "No group of that id is playing.", 404)
            return "The game was ended." if self._end_game(found) else "That group has no game under way."
        raise StageError("bad_action", f"No action '{action[:40]}'.", 400)

    async def _condition_control(self, action: str, condition: object) -> str:
        """Close a condition to new groups (its groups under way play on), or open it again."""
        known = [c.name for c in self.file.conditions]
        if not isinstance(condition, str) or condition not in known:
            raise StageError("no_condition", f"No condition of that name; the study's are {', '.join(known) or 'none'}.",
                             404)
        if action == "open_condition":
            if condition in self.state.closed:
                self.state.closed.remove(condition)
                await self._saved(state=True)
            return f"Condition {condition} is open: new groups may be assigned it again."
        if condition not in self.state.closed:
            if self.open_conditions() == [condition]:
                raise StageError("last_condition", "This is the last open condition; close the lobby instead.", 409)
            self.state.closed.append(condition)
            await self._saved(state=True)
        return f"Condition {condition} is closed: no new group is assigned it; its groups under way play on."

    def _end_game(self, group: GroupRecord) -> bool:
        room = self.rooms.get(group.room or "") if self.rooms else None
        return room is not None and room.interrupt_game("ended by the experimenter")

    def outcome_counts(self) -> dict[Outcome, int]:
        counts: dict[Outcome, int] = {}
        for p in self.participants.values():
            if p.outcome is not None:
                counts[p.outcome] = counts.get(p.outcome, 0) + 1
        return counts


def by_name(config: Any) -> Any:
    """A study file's values with its conditions keyed by name, so a change is told at the condition it touches
    (``conditions.lexicon.game.x``), whatever their order in the file."""
    if not isinstance(config, dict):
        return config
    # A file stored before studies had conditions has no such key: the same as none.
    conditions = config.get("conditions") or []
    return {**config, "conditions": {c.get("name"): c for c in conditions if isinstance(c, dict)}}


def changed_keys(before: Any, after: Any, at: str = "") -> list[str]:
    """The dotted keys whose values differ between two files' values (a list compared whole)."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            out += changed_keys(before.get(key), after.get(key), f"{at}.{key}" if at else str(key))
        return out
    return [] if before == after else [at or "(the whole file)"]


def admin_key(environ: dict[str, str] | None = None) -> tuple[str, bool]:
    """The dashboard's key: ``LEXICOORD_ADMIN_KEY`` if set (False: not to be printed), else a new one (True)."""
    import os

    given = (environ if environ is not None else os.environ).get("LEXICOORD_ADMIN_KEY", "").strip()
    return (given, False) if given else (secrets.token_urlsafe(18), True)
