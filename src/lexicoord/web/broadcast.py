"""What a room's pages are sent: the room as each person may see it, once per turn of changes, and its statistics.

Separate from the room because sending is a matter of timing and cost, not of rules: every change anywhere in
the room (a join, a move, an event of the game) only marks the room changed, and one broadcast a turn later
builds the part everyone sees once (serialised once), each person's own part from their view alone, and sends
a frame only to a page whose state changed (:class:`~lexicoord.web.connection.Connection`). What everyone sees
is the room's own part (:class:`~lexicoord.web.frames.RoomSeen`: people, lead, notice, agents) beside the
adapter's :meth:`~lexicoord.web.adapters.base.RoomAdapter.view`, key for key.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from lexicoord.web.frames import AgentSeen, PersonSeen, RoomSeen, YouSeen, merged, state_text, stats_of

if TYPE_CHECKING:
    from lexicoord.web.adapters.base import RoomAdapter
    from lexicoord.web.people import People, Person
    from lexicoord.web.room_game import RoomGame
    from lexicoord.web.room_state import Managed
    from lexicoord.web.settings import RoomSettings


class Shown(Protocol):
    """What the pages are shown of a room: its code, agents and adapter, its people, its notice, whether a study
    manages it, and who took over whose seat in its game."""

    code: str
    settings: RoomSettings
    adapter: RoomAdapter
    people: People
    notice: str | None
    managed: Managed | None
    game: RoomGame


class Broadcast:
    """Builds and sends the room's frames; :meth:`changed` is all a change has to call."""

    def __init__(self, room: Shown) -> None:
        self.room = room
        self._dirty = False
        #: The agents seated in every game, built once: every broadcast sends them.
        self._agents = [AgentSeen(name=a.name, model=a.model) for a in room.settings.agents]
        #: The statistics the pages were last sent (a page that opens is sent them too).
        self.stats: dict[str, Any] | None = None

    def changed(self) -> None:
        """Schedule one broadcast for all the changes made in this turn of the event loop and the next.

        The next turn too, because a change often wakes tasks whose first step is a change of its own: a
        round that opens starts every seat's move in one turn, and each person's request opens when their
        seat's task first runs, a turn later. Broadcast at once, the room would send every page the moves
        started and then, a turn later, the requests: two frames for one change anyone could see."""
        if not self._dirty:
            self._dirty = True
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self.send)

    def send(self) -> None:
        """Send every open page the room as its person may see it now."""
        self._dirty = False
        people = [p for p in self.room.people.values() if p.connections]
        if not people:  # no page open: nothing to build
            return
        public = self.public_text()
        for person in people:
            text = state_text(public, self.you_text(person))
            for conn in person.connections:
                conn.send_state(text)

    def send_stats(self, stats: dict[str, Any]) -> None:
        self.stats = stats
        payload = stats_of(stats).text()
        for p in self.room.people.values():
            for conn in p.connections:
                conn.send(payload)

    def state_for(self, person: Person) -> str:
        return state_text(self.public_text(), self.you_text(person))

    # ------------------------------------------------------------------------------- what is seen
    def _own(self) -> RoomSeen:
        """The room's own part of what everyone sees (the adapter's part goes beside it)."""
        room = self.room
        leader = room.people.leader
        return RoomSeen(
            code=room.code, protocol=room.adapter.protocol, agents=self._agents,
            leader=leader.name if leader else None,
            people=[PersonSeen(name=p.name, connected=bool(p.connections), absent=p.absent, played_by=self._played_by(p))
                    for p in room.people.values()],
            notice=room.notice, managed=room.managed is not None,
        )

    def _played_by(self, person: Person) -> str | None:
        """The model playing ``person``'s seat: one that took it over in the game in play (or the one just
        played). After a restart the takeover is replayed only when the game reaches it again, so a study's
        person marked absent (which a managed room does only once a model took their seat) whose seat is at the
        table being replayed is shown as the study's model's already. Later games leave that seat out: None."""
        taken = self.room.game.taken.get(person.name)
        if taken is not None:
            return taken.by
        managed = self.room.managed
        if managed is None or not person.absent:
            return None
        current = self.room.game.played.current
        seated = current is not None and any(a.name == person.name for a in current.spec.lineup)
        return managed.model if seated else None

    def public(self) -> RoomSeen:
        """What everyone sees, as one model (the room's own part and the adapter's, key for key)."""
        return RoomSeen(**self._own().model_dump(), **self.room.adapter.view(None).model_dump(mode="json"))

    def public_text(self) -> str:
        """What everyone sees, as the JSON every ``state`` frame carries: built and serialised once per broadcast."""
        return merged(self._own(), self.room.adapter.view(None))

    def you(self, person: Person) -> YouSeen:
        return YouSeen(**self._own_you(person).model_dump(), **self.room.adapter.view(person).model_dump(mode="json"))

    def _own_you(self, person: Person) -> YouSeen:
        return YouSeen(name=person.name, leader=person is self.room.people.leader, absent=person.absent)

    def you_text(self, person: Person) -> str:
        """What only ``person`` sees, as JSON: built from that person's own view alone."""
        return merged(self._own_you(person), self.room.adapter.view(person))
