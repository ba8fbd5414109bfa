"""A room for protocols played in turns of written replies (the leader-follower debate, COGENT): the common part.

What such a room shows is the same whatever the protocol: the task in play, who
is thinking, each person's own transcript (the lines of the events that person's
seat may see, never more), and the request that person is asked to answer, as a
form built from the request's answer schema (the same schema a model's reply
must meet, so a person and a model have the same limits). A protocol's adapter
adds only what differs: where its tasks come from, which seats people take, the
rules' settings, and how a task and an outcome read. Phases: ``lobby``,
``playing``, ``over``; every game is an episode of the room's run, so
``lexicoord report`` reads a room like any campaign.
"""

from __future__ import annotations

import io
import time
from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from lexicoord.analysis.cells import write_csv
from lexicoord.core.audience import Viewer, can_see
from lexicoord.core.events import Event, MessageEvent, OutcomeEvent
from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.runs.records import EpisodeRecord
from lexicoord.web.adapters.base import AdapterError, CurrentGame, GameState, RoomAdapter
from lexicoord.web.messages import Inbound
from lexicoord.web.room import Person

#: Event types that are bookkeeping, not something a player said or learned.
SILENT = frozenset({"model_call", "outcome", "round_closed", "error"})
#: Lines of a finished game kept for the page's history (the export and the store keep everything).
HISTORY = 30
#: The longest free-text reply a person may send (a model's is bounded by its token limit); a frame holds 4 kB.
MAX_TEXT = 3000

#: The page part every turn room shares; it draws whichever protocol the room plays.
TURNS_SCRIPT = Path(__file__).with_name("turns.js")


class Reply(Inbound):
    """A person's answer to the request their seat was given: the value its schema asks for, or an action."""

    type: Literal["reply"]
    kind: str = Field(min_length=1, max_length=40)
    round: int | None = Field(default=None, ge=0, le=1000)
    value: dict[str, Any] | None = None
    action: str | None = Field(default=None, max_length=20)


class TurnsState(GameState):
    phase: Literal["lobby", "playing", "over"] = "lobby"
    cursor: int = 0


def event_line(event: Event) -> str | None:
    """How an event reads in a transcript (``None`` for bookkeeping)."""
    if event.type in SILENT:
        return None
    line = getattr(event, "line", None)
    if callable(line):
        text = str(line())
    elif isinstance(event, MessageEvent):
        text = event.content
    else:
        text = event.type.replace("_", " ")
    who = f"{event.agent}: " if event.agent and not text.startswith(event.agent) else ""
    return f"{who}{text}"


def transcript(events: list[Event], viewer: Viewer) -> list[dict[str, Any]]:
    """The lines ``viewer`` may read, each with who else could read it."""
    out = []
    for e in events:
        if not can_see(viewer, e.audience):
            continue
        text = event_line(e)
        if text is not None:
            out.append({"round": e.round, "phase": e.phase, "text": text, "to": e.audience.describe()})
    return out


def form(request_schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The fields of an answer schema, as the page draws them (a closed set, a long text, a line)."""
    fields = []
    required = set(request_schema.get("required", []))
    for name, spec in request_schema.get("properties", {}).items():
        field: dict[str, Any] = {"name": name, "required": name in required}
        if "enum" in spec:
            field.update(kind="choice", choices=list(spec["enum"]))
        elif spec.get("type") == "boolean":
            field.update(kind="choice", choices=[True, False])
        else:
            field.update(kind="text", max_length=spec.get("maxLength", MAX_TEXT), min_length=spec.get("minLength", 0))
        fields.append(field)
    return fields


class TurnsRoom(RoomAdapter):
    """The common part of a room played in written turns; see the module's docstring."""

    state: TurnsState
    state_model = TurnsState
    messages: ClassVar[tuple[type[Inbound], ...]] = (Reply,)

    def __init__(self, room: Any) -> None:
        super().__init__(room)
        self.state = TurnsState()
        self.status: dict[str, dict[str, Any]] = {}
        self.events: list[Event] = []
        self.outcome: dict[str, Any] | None = None
        self.error: str | None = None
        self.history: list[dict[str, Any]] | None = None

    # ----------------------------------------------------------------- what a protocol's room says
    @abstractmethod
    def protocol_instance(self) -> Protocol: ...

    @abstractmethod
    def next_item(self) -> dict[str, Any]:
        """The task of the next game (``self.state.cursor`` counts the games begun)."""

    @abstractmethod
    def seats(self, people: list[str], agents: list[AgentSpec]) -> list[AgentSpec]:
        """The line-up: people (the leader first) and the room's agents, in the protocol's seat order."""

    @abstractmethod
    def game_settings(self) -> dict[str, Any]:
        """The rules' settings, stored with every game as a campaign's would be."""

    @abstractmethod
    def item_view(self, item: dict[str, Any]) -> dict[str, Any]:
        """What everyone may see of the task: never its answer key while a game is played."""

    @abstractmethod
    def outcome_text(self, item: dict[str, Any], outcome: dict[str, Any]) -> str:
        """How a game's end reads, answer included (the game is over)."""

    # --------------------------------------------------------------------- creation and saving


    # --------------------------------------------------------------------------------- moves
    async def start(self) -> None:
        if self.state.phase == "playing":
            raise AdapterError("wrong_phase", "A game is already under way.")
        people = [p.name for p in sorted((p for p in self.room.people.values() if not p.absent),
                                         key=lambda p: p is not self.room.leader)]
        agents = [AgentSpec(name=a.name, model=a.model, options={"temperature": self.settings.temperature})
                  for a in self.settings.agents]
        lineup = self.seats(people, agents)
        item = self.next_item()
        self.state.cursor += 1
        self.state.games += 1
        spec = EpisodeSpec(item_id=str(item.get("id", self.state.games)), item=item, settings=self.game_settings(),
                           lineup=lineup, repetition=self.state.games)
        self.state.current = CurrentGame(number=self.state.games, spec=spec, seed=spec.seed(self.settings.seed))
        self.state.phase = "playing"
        self.room.notice = None
        await self.room.save()
        self._launch({})

    def _launch(self, replay: dict[str, list[dict[str, Any]]]) -> None:
        current = self.state.current
        assert current is not None
        self.status, self.events, self.outcome, self.error = {}, [], None, None
        self.room.play(self.protocol_instance(), current.spec, current.number, current.seed, replay)

    async def end(self) -> None:
        if self.state.phase != "playing" or not self.room.interrupt_game("the leader ended the game"):
            raise AdapterError("wrong_phase", "No game is being played.")

    async def handle(self, person: Person, msg: Inbound) -> None:
        if not isinstance(msg, Reply):
            return
        found = self.room.seat_request(person)
        if found is None:
            raise AdapterError("not_your_turn", "Nothing is asked of you now.")
        seat, pending = found
        if msg.kind != pending.kind or msg.round != pending.round:
            raise AdapterError("round_closed", f"That answers an earlier request; you are asked to {pending.kind} now.")
        if msg.action is not None:
            if msg.action not in pending.actions:
                raise AdapterError("bad_answer", f"'{msg.action}' is not possible here.")
            seat.submit(action=msg.action)
            return
        value = {k: " ".join(v.split()) if isinstance(v, str) and k != "text" else v for k, v in (msg.value or {}).items()}
        problem = pending.check(value)
        if problem is not None:  # the same schema a model's reply meets: the person can correct it
            raise AdapterError("bad_answer", f"Not accepted: {problem}.")
        seat.submit(value)

    # ------------------------------------------------------------------- the game as it goes
    def on_event(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, OutcomeEvent):
            self.outcome = event.outcome
        elif event.type == "error":
            self.error = getattr(event, "message", "the game failed")

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None) -> None:
        self.status[name] = {"state": "thinking", "kind": kind, "deadline": deadline, "since": time.time()}

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        self.status[name] = {"state": "failed" if failure else "done", "kind": kind, "detail": failure}

    async def game_over(self, record: EpisodeRecord, events: list[Event]) -> None:
        async with self.room.lock:
            self.state.phase = "over"
            self.state.current = None
            await self.room.save()
        if self.history is not None:
            self.history.insert(0, self._summary(record))

    def game_failed(self) -> None:
        self.state.phase = "over"
        self.state.current = None

    # --------------------------------------------------------------------------------- views
    def _game(self) -> dict[str, Any] | None:
        current = self.state.current
        spec = current.spec if current else None
        if spec is None and not self.events:
            return None
        item = spec.item if spec else {}
        return {
            "number": current.number if current else self.state.games,
            "item": self.item_view(item) if spec else None,
            "players": [{"name": a.name, "kind": a.kind, "model": a.model, "role": a.role}
                        for a in (spec.lineup if spec else [])],
            "status": self.status,
            "error": self.error,
        }

    def public(self) -> dict[str, Any]:
        return {"phase": self.state.phase, "games": self.state.games, "game": self._game(),
                "spectators": transcript(self.events, Viewer())}

    def you(self, person: Person) -> dict[str, Any]:
        viewer = self.room.ctx.viewer(person.name) if self.room.ctx is not None else Viewer(name=person.name)
        found = self.room.seat_request(person)
        request = None
        if found is not None:
            pending = found[1]
            request = {"kind": pending.kind, "round": pending.round, "prompt": pending.prompt,
                       "fields": form(pending.schema_for_answer()), "actions": list(pending.actions)}
        return {"request": request, "transcript": transcript(self.events, viewer)}

    # ---------------------------------------------------------------------------- statistics
    def _summary(self, record: EpisodeRecord) -> dict[str, Any]:
        item = (record.spec or {}).get("item", {})
        text = self.outcome_text(item, record.outcome) if record.outcome else f"failed: {record.error}"
        return {"number": record.repetition, "item": record.item_id, "status": record.status, "outcome": text}

    def _load_history(self) -> list[dict[str, Any]]:
        return [self._summary(e) for e in reversed(self.room.services.store.episodes(self.room.run_id))]

    async def stats(self) -> dict[str, Any]:
        if self.history is None:
            self.history = await self.room.services.rooms.call(self._load_history)
        done = [h for h in self.history if h["status"] == "done"]
        return {"games": len(self.history), "done": len(done), "failed": len(self.history) - len(done),
                "history": self.history[:HISTORY]}

    def new_run(self) -> None:
        self.history = []

    async def export_json(self) -> dict[str, Any]:
        history = await self.room.services.rooms.call(self._load_history)
        return {"room": {"code": self.room.code, "run": self.room.run_id, "protocol": self.protocol,
                         "settings": self.settings.model_dump(mode="json")}, "games": history}

    async def export_csv(self) -> str:
        history = await self.room.services.rooms.call(self._load_history)
        out = io.StringIO()
        write_csv(out, ["game", "item", "status", "outcome"],
                  ([h["number"], h["item"], h["status"], h["outcome"]] for h in history))
        return out.getvalue()
