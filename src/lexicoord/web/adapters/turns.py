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
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field

from lexicoord.analysis.cells import write_csv
from lexicoord.core.audience import Viewer, can_see
from lexicoord.core.events import Event, MessageEvent, OutcomeEvent
from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.runs.records import EpisodeRecord
from lexicoord.web.adapters.base import AdapterError, CurrentGame, GameState, RoomAdapter, RoomPhase, Watch
from lexicoord.web.frames import Part, SeatSeen
from lexicoord.web.messages import Inbound

if TYPE_CHECKING:
    from lexicoord.web.people import Person

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
    #: Games begun, counted by the adapter to pick the next item.
    cursor: int = 0


# ------------------------------------------------------------------ what the page is sent (turns.js reads it)
#: A value a closed field offers: what an answer schema's ``enum`` may list.
Choice = str | int | float | bool | None


class Line(Part):
    """One line of a transcript, and who else could read it."""

    round: int | None
    phase: str | None
    text: str
    to: str


class ChoiceField(Part):
    """A field answered by picking one of a closed set (an ``enum``, or yes / no)."""

    name: str
    required: bool
    kind: Literal["choice"] = "choice"
    choices: list[Choice]


class TextField(Part):
    """A field answered in words, within the schema's lengths."""

    name: str
    required: bool
    kind: Literal["text"] = "text"
    max_length: int
    min_length: int


FormField = Annotated[ChoiceField | TextField, Field(discriminator="kind")]


class Asked(Part):
    """The request a person's seat waits on: the prompt a model would read, the form, the other ways out."""

    kind: str
    round: int | None
    prompt: str
    fields: list[FormField]
    actions: list[str]


class Thinking(Part):
    """A seat asked and not yet answered: since when, and until when it may take."""

    state: Literal["thinking"] = "thinking"
    kind: str
    deadline: float | None
    since: float


class Answered(Part):
    """A seat's move done (or failed, and why)."""

    state: Literal["done", "failed"]
    kind: str
    detail: str | None


SeatStatus = Annotated[Thinking | Answered, Field(discriminator="state")]


class Player(SeatSeen):
    role: str | None


class TurnGame(Part):
    """The game on the table: the task as everyone may see it (never its key), the seats and how each fares."""

    number: int
    #: The protocol's own view of its task (:meth:`TurnsRoom.item_view`).
    item: dict[str, Any] | None
    players: list[Player]
    status: dict[str, SeatStatus]
    error: str | None


class TurnsPublic(Part):
    """What everyone in a turn room sees."""

    phase: RoomPhase
    games: int
    game: TurnGame | None
    #: The lines anyone may read (the page shows them to a person with no seat).
    spectators: list[Line]


class TurnsYou(Part):
    """What one person sees: their request, and the lines their seat may read."""

    request: Asked | None
    transcript: list[Line]


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


def transcript(events: list[Event], viewer: Viewer) -> list[Line]:
    """The lines ``viewer`` may read, each with who else could read it."""
    out = []
    for e in events:
        if not can_see(viewer, e.audience):
            continue
        text = event_line(e)
        if text is not None:
            out.append(Line(round=e.round, phase=e.phase, text=text, to=e.audience.describe()))
    return out


def form(request_schema: dict[str, Any]) -> list[ChoiceField | TextField]:
    """The fields of an answer schema, as the page draws them (a closed set, a long text, a line)."""
    fields: list[ChoiceField | TextField] = []
    required = set(request_schema.get("required", []))
    for name, spec in request_schema.get("properties", {}).items():
        if "enum" in spec:
            fields.append(ChoiceField(name=name, required=name in required, choices=list(spec["enum"])))
        elif spec.get("type") == "boolean":
            fields.append(ChoiceField(name=name, required=name in required, choices=[True, False]))
        else:
            fields.append(TextField(name=name, required=name in required, max_length=spec.get("maxLength", MAX_TEXT),
                                    min_length=spec.get("minLength", 0)))
    return fields


class TurnLog:
    """A game of turns as it is played: its events, who is thinking or has answered, its outcome or error."""

    def __init__(self) -> None:
        self.status: dict[str, Thinking | Answered] = {}
        self.events: list[Event] = []
        self.outcome: dict[str, Any] | None = None
        self.error: str | None = None

    def on_event(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, OutcomeEvent):
            self.outcome = event.outcome
        elif event.type == "error":
            self.error = getattr(event, "message", "the game failed")

    def move_started(self, name: str, kind: str, round_: int | None, deadline: float | None,
                     phase: str | None = None) -> None:
        self.status[name] = Thinking(kind=kind, deadline=deadline, since=time.time())

    def move_done(self, name: str, kind: str, round_: int | None, failure: str | None) -> None:
        self.status[name] = Answered(state="failed" if failure else "done", kind=kind, detail=failure)


class TurnsRoom(RoomAdapter):
    """The common part of a room played in written turns; see the module's docstring."""

    state: TurnsState
    state_model = TurnsState
    messages: ClassVar[tuple[type[Inbound], ...]] = (Reply,)

    def __init__(self, room: Any) -> None:
        super().__init__(room)
        self.log = TurnLog()
        self.history: list[dict[str, Any]] | None = None

    # ----------------------------------------------------------------- what a protocol's room says
    @abstractmethod
    def protocol_instance(self) -> Protocol[Any, Any, Any]: ...

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

    # ------------------------------------------------------------------------------ the six calls
    async def start(self, number: int, lineup: list[AgentSpec]) -> EpisodeSpec | None:
        people = [a.name for a in lineup if a.kind == "human"]
        agents = [a for a in lineup if a.kind != "human"]
        # A protocol seats people by name; what the room knows of each (a study's participant id) goes with
        # their seat whatever the protocol built, so every game names who played it.
        own = {a.name: a.options for a in lineup if a.kind == "human" and a.options}
        seats = [s.model_copy(update={"options": {**own[s.name], **s.options}}) if s.kind == "human" and s.name in own
                 else s for s in self.seats(people, agents)]
        item = self.next_item()
        self.state.cursor += 1
        return EpisodeSpec(item_id=str(item.get("id", number)), item=item, settings=self.game_settings(),
                           lineup=seats, repetition=number)

    async def move(self, person: Person | None, msg: Inbound) -> EpisodeSpec | None:
        if not isinstance(msg, Reply) or person is None:
            return None
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
            return None
        value = {k: " ".join(v.split()) if isinstance(v, str) and k != "text" else v for k, v in (msg.value or {}).items()}
        problem = pending.check(value)
        if problem is not None:  # the same schema a model's reply meets: the person can correct it
            raise AdapterError("bad_answer", f"Not accepted: {problem}.")
        seat.submit(value)
        return None

    def watch(self, current: CurrentGame) -> Watch:
        self.log = TurnLog()
        return Watch(self.protocol_instance(), self.log)

    def view(self, person: Person | None) -> TurnsPublic | TurnsYou:
        if person is None:
            return TurnsPublic(phase=self.room.phase, games=self.room.games, game=self._game(),
                               spectators=transcript(self.log.events, Viewer()))
        viewer = self.room.seat_viewer(person)
        found = self.room.seat_request(person)
        request = None
        if found is not None:
            pending = found[1]
            request = Asked(kind=pending.kind, round=pending.round, prompt=pending.prompt,
                            fields=form(pending.schema_for_answer()), actions=list(pending.actions))
        return TurnsYou(request=request, transcript=transcript(self.log.events, viewer))

    async def summary(self, ended: tuple[EpisodeRecord, list[Event]] | None = None) -> dict[str, Any]:
        if self.history is None:
            self.history = await self.room.services.rooms.call(self._load_history)
        elif ended is not None:
            self.history.insert(0, self._summary(ended[0]))
        done = [h for h in self.history if h["status"] == "done"]
        return {"games": len(self.history), "done": len(done), "failed": len(self.history) - len(done),
                "history": self.history[:HISTORY]}

    async def export(self, kind: Literal["json", "csv"]) -> dict[str, Any] | str:
        history = await self.room.services.rooms.call(self._load_history)
        if kind == "json":
            return {"room": {"code": self.room.code, "run": self.room.run_id, "protocol": self.protocol,
                             "settings": self.settings.model_dump(mode="json")}, "games": history}
        out = io.StringIO()
        write_csv(out, ["game", "item", "status", "outcome"],
                  ([h["number"], h["item"], h["status"], h["outcome"]] for h in history))
        return out.getvalue()

    # --------------------------------------------------------------------------------- views
    def _game(self) -> TurnGame | None:
        current = self.room.current
        spec = current.spec if current else None
        if spec is None and not self.log.events:
            return None
        item = spec.item if spec else {}
        return TurnGame(
            number=current.number if current else self.room.games,
            item=self.item_view(item) if spec else None,
            players=[Player(name=a.name, kind=a.kind, model=a.model, role=a.role) for a in (spec.lineup if spec else [])],
            status=self.log.status,
            error=self.log.error,
        )

    def _summary(self, record: EpisodeRecord) -> dict[str, Any]:
        item = (record.spec or {}).get("item", {})
        text = self.outcome_text(item, record.outcome) if record.outcome else f"failed: {record.error}"
        return {"number": record.repetition, "item": record.item_id, "status": record.status, "outcome": text}

    def _load_history(self) -> list[dict[str, Any]]:
        return [self._summary(e) for e in reversed(self.room.services.store.episodes(self.room.run_id))]
