"""The people in a room: who they are (a name, a secret token's hash), which pages they have open, and who leads.

Separate from the room because who may sit at the table, who is connected and who leads change by rules of
their own, whatever is played and whether a game is under way: the first to join leads; the leader may hand
the lead over; when the leader has been away (no open page) for ``LEAD_AFTER`` seconds, anyone still playing
may take it; a new leader is Player 1 from the next game on. :class:`People` changes only itself and says what
changed (a notice to show); the room takes its lock around a change, saves it and broadcasts it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lexicoord.core.spec import AgentSpec
from lexicoord.web.errors import RoomError
from lexicoord.web.room_state import SavedPerson
from lexicoord.web.settings import RoomSettings, clean_name
from lexicoord.web.tokens import hash_token, new_token, token_matches

if TYPE_CHECKING:
    from lexicoord.web.connection import Connection

#: Seconds a leader may be away (no open page) before another person may take the lead.
LEAD_AFTER = 60.0


@dataclass(eq=False)
class Person:
    name: str
    token_hash: str
    joined_at: float = field(default_factory=time.time)
    absent: bool = False
    #: A study's participant id (kept with the seat in every game's record; never shown to the others).
    participant: str | None = None
    connections: set[Connection] = field(default_factory=set)
    #: Since when the person has had no open page (not saved: after a restart everyone starts away).
    away_since: float | None = field(default_factory=time.time)


class People(dict[str, Person]):
    """A room's people by name, who leads, and since when no one has had a page of the room open."""

    def __init__(self) -> None:
        super().__init__()
        #: Who leads: the first to join, until the lead is handed over or taken.
        self.leader_name: str | None = None
        #: Seconds the leader must be away before someone else may take the lead.
        self.lead_after = LEAD_AFTER
        #: Since when no one has had a page of the room open (monotonic seconds; None while someone has).
        self.empty_since: float | None = time.monotonic()

    @property
    def leader(self) -> Person | None:
        if self.leader_name is not None and self.leader_name in self:
            return self[self.leader_name]
        return next(iter(self.values()), None)

    def seated(self) -> list[AgentSpec]:
        """The people's seats at the next game: the leader first (Player 1), then the others present."""
        leader = self.leader
        present = sorted((p for p in self.values() if not p.absent), key=lambda p: p is not leader)
        return [AgentSpec(name=p.name, kind="human", options={"participant": p.participant} if p.participant else {})
                for p in present]

    # ------------------------------------------------------------------------------- who is here
    def admit(self, name: str, settings: RoomSettings, participant: str | None = None) -> tuple[Person, str]:
        """A new person (a study's ``participant``), and their secret token; the first to join leads."""
        try:
            name = clean_name(name)
        except ValueError as exc:
            raise RoomError("bad_name", str(exc)) from None
        taken = {n.lower() for n in self} | {a.name.lower() for a in settings.agents}
        if name.lower() in taken:
            raise RoomError("name_taken", f"'{name}' is taken in this room; choose another name.")
        if sum(1 for p in self.values() if not p.absent) >= settings.max_people:
            raise RoomError("room_full", f"The room is full ({settings.max_people} people).")
        token = new_token()
        person = self[name] = Person(name, hash_token(token), participant=participant)
        if self.leader_name is None:
            self.leader_name = name
        return person, token

    def reissue(self, name: str) -> str:
        """A new secret token for ``name``: any older one stops working."""
        token = new_token()
        self[name].token_hash = hash_token(token)
        return token

    def person_for(self, token: str) -> Person | None:
        for p in self.values():
            if token_matches(token, p.token_hash):
                return p
        return None

    def drop(self, name: str) -> Person:
        """The leader lets ``name`` go: absent from this game's count and from every later game."""
        person = self.get(name)
        if person is None or person is self.leader:
            raise RoomError("no_such_person", "The leader can let go any other person in the room, by name.")
        person.absent = True
        return person

    # ---------------------------------------------------------------------------------- the lead
    def hand_over(self, name: str) -> str:
        """The leader hands the lead to ``name``; what the room says of it."""
        person = self.get(name)
        if person is None or person.absent or person is self.leader:
            raise RoomError("no_such_person", "Hand the lead to another person who is in the room, by name.")
        self.leader_name = name
        return f"{name} now leads; from the next game on, {name} is Player 1."

    def take_lead(self, person: Person) -> str:
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
        return f"{person.name} took the lead from {before}; from the next game on, {person.name} is Player 1."

    # ------------------------------------------------------------------------------ their pages
    def connect(self, person: Person, conn: Connection) -> None:
        person.connections.add(conn)
        person.away_since = None
        self.empty_since = None

    def disconnect(self, person: Person, conn: Connection) -> None:
        person.connections.discard(conn)
        if not person.connections:
            person.away_since = time.time()
        if self.empty_since is None and not any(p.connections for p in self.values()):
            self.empty_since = time.monotonic()

    def idle_for(self, now: float) -> float:
        """Seconds no one has had a page of the room open (0 while someone has)."""
        return 0.0 if self.empty_since is None else now - self.empty_since

    async def close_pages(self, code: int, reason: str, person: Person | None = None) -> None:
        """Close every open page of the room (or of ``person``), saying why."""
        for conn in [c for p in ([person] if person is not None else self.values()) for c in p.connections]:
            await conn.close(code, reason)

    # ------------------------------------------------------------------------------------ saved
    def saved(self) -> list[SavedPerson]:
        return [SavedPerson(name=p.name, token_hash=p.token_hash, joined_at=p.joined_at, absent=p.absent,
                            participant=p.participant) for p in self.values()]

    def restore(self, saved: list[SavedPerson], leader: str | None) -> None:
        for p in saved:
            self[p.name] = Person(p.name, p.token_hash, p.joined_at, p.absent, p.participant)
        self.leader_name = leader
