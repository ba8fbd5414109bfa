"""The coordination game in a live room: its phases, its moves, what everyone sees, its statistics.

Phases: ``lobby`` (people join; the leader starts), in manual mode ``sentence``
(the leader writes a sentence and picks the word), ``proposing`` (every player,
people and agents, proposes a meaning; nobody sees another's until all are in)
and ``confirm`` (the leader edits the merged option set), then
``playing``, then ``over`` (the outcome; the leader starts the next game). ``lobby``, ``playing`` and
``over`` are the room's own (``RoomView.phase``); manual mode's three are this adapter's, saved in its state.
Each game is stored as an episode of the room's run, so it appears in
``lexicoord report`` like any campaign.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.protocols.coordination.items import CoordinationItem
from lexicoord.protocols.coordination.manual import (
    Option,
    Proposal,
    gather_proposals,
    manual_item,
    merge_proposals,
    propose_request,
    validate_manual,
    with_proposals,
)
from lexicoord.protocols.coordination.room_history import RoomRecord, history_csv, load_record, room_stats
from lexicoord.protocols.coordination.room_messages import (
    MESSAGES,
    Choose,
    Clarify,
    CloseProposals,
    ManualConfirm,
    ManualSentence,
    Propose,
)
from lexicoord.protocols.coordination.room_view import GameView, Table
from lexicoord.runs.records import EpisodeRecord
from lexicoord.seats.factory import SeatFactory
from lexicoord.web.adapters.base import AdapterError, CurrentGame, GameState, RoomAdapter, Watch
from lexicoord.web.frames import Part, SeatSeen
from lexicoord.web.messages import EndGame, Inbound, Restarted
from lexicoord.web.settings import RoomSettings

if TYPE_CHECKING:
    from lexicoord.web.people import Person
    from lexicoord.web.services import Services


class CoordinationRoomSettings(RoomSettings):
    mode: Literal["automatic", "manual"] = Field(
        default="automatic", description="Mode (automatic: sentences from a dataset; manual: the leader writes one)")
    dataset: str = Field(default="builtin", max_length=200, description="Dataset")
    clarification_bound: int = Field(default=3, ge=0, le=10, description="Clarification bound")
    leader_clarifies: bool = Field(default=True, description="The leader may clarify between rounds")
    failed_moves: Literal["block", "ignore"] = Field(
        default="block", description="A failed move (block: it prevents agreement; ignore: the others may agree)")

    def game_settings(self) -> dict[str, object]:
        """The rules' settings, as stored with each game (and read by ``lexicoord report``)."""
        return {"clarification_bound": self.clarification_bound, "leader_clarifies": self.leader_clarifies,
                "failed_moves": self.failed_moves, "seat_timeout": self.seat_timeout}

    @classmethod
    def choices(cls, services: Services) -> dict[str, list[Any]]:
        return {"dataset": services.item_sets("coordination")}

    def check(self, services: Services) -> None:
        services.items_of("coordination", self.dataset)
        super().check(services)

    def run_config(self) -> dict[str, Any]:
        return {"mode": self.mode, "dataset": self.dataset, "lineup": [a.model_dump() for a in self.agents],
                "settings": self.game_settings()}


#: Manual mode's phases, the protocol's own: they come before play.
ManualPhase = Literal["sentence", "proposing", "confirm"]
#: A room's phases as the page shows them: manual mode's three come before play.
Phase = Literal["lobby", "sentence", "proposing", "confirm", "playing", "over"]


class ManualShown(Part):
    """Manual mode as everyone sees it outside proposing: the sentence and word, and once the proposals are
    merged, who proposed what, the options to confirm and who gave none."""

    sentence: str
    word: str
    awaiting: list[str]
    proposals: list[Option]
    options: list[str]
    silent: list[str]


class ProposingShown(Part):
    """Manual mode while proposing: only who has proposed (a proposal stays hidden until everyone's is in)."""

    sentence: str
    word: str
    awaiting: list[str]
    proposed: list[str]
    agents_done: bool


class ManualState(BaseModel):
    """Manual mode before play: the leader's sentence and word; while proposing, the people still to propose,
    the people's and the agents' proposals (``None`` until the agents have answered); then the merged
    proposals, the options to confirm, and who gave none."""

    sentence: str
    word: str
    awaiting: list[str] = Field(default_factory=list)
    people: list[Proposal] = Field(default_factory=list)
    agents: list[Proposal] | None = None
    agents_silent: list[str] = Field(default_factory=list)
    proposals: list[Option] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)
    silent: list[str] = Field(default_factory=list)

    def public(self, phase: str) -> ManualShown | ProposingShown:
        """While proposing, only who has proposed: a proposal stays hidden until everyone's is in."""
        if phase != "proposing":
            return ManualShown(sentence=self.sentence, word=self.word, awaiting=self.awaiting,
                               proposals=self.proposals, options=self.options, silent=self.silent)
        return ProposingShown(sentence=self.sentence, word=self.word, awaiting=self.awaiting,
                              proposed=[p.agent for p in self.people], agents_done=self.agents is not None)


class RulesShown(Part):
    """The room's rules the page states."""

    clarification_bound: int
    seat_timeout: float
    agent_timeout: float
    dataset: str


class CoordinationPublic(Part):
    """What everyone in a coordination room sees: the phase, the rules, manual mode's phases, the table."""

    phase: Phase
    games: int
    mode: Literal["automatic", "manual"]
    settings: RulesShown
    manual: ManualShown | ProposingShown | None
    game: Table | None


class Asked(Part):
    """What a person is asked now (the table shows the rest): ``propose`` in manual mode has no round."""

    kind: str
    round: int | None


class CoordinationYou(Part):
    request: Asked | None


class CoordinationState(GameState):
    #: Manual mode's phase while the room is in a phase of the protocol's own (the room keeps its other phases).
    phase: ManualPhase | None = None
    cursor: int = 0
    manual: ManualState | None = None


class CoordinationRoom(RoomAdapter):
    state: CoordinationState
    protocol = "coordination"
    settings_model = CoordinationRoomSettings
    state_model = CoordinationState
    messages = MESSAGES
    leader_messages = (ManualSentence, ManualConfirm, CloseProposals)
    scripts = (Path(__file__).with_name("room.js"),)

    def __init__(self, room: Any) -> None:
        super().__init__(room)
        self.table: GameView | None = None
        self.record: RoomRecord | None = None
        settings = self.settings
        #: The room's fixed rules, built once: every broadcast sends them.
        self._rules = RulesShown(clarification_bound=settings.clarification_bound, seat_timeout=settings.seat_timeout,
                                 agent_timeout=settings.agent_timeout, dataset=settings.dataset)

    @property
    def settings(self) -> CoordinationRoomSettings:
        assert isinstance(self.room.settings, CoordinationRoomSettings)
        return self.room.settings

    @property
    def phase(self) -> Phase:
        """Manual mode's phase while the room is in a phase of the protocol's own, else the room's."""
        room = self.room.phase
        if room == "own":
            return self.state.phase or "sentence"
        return room

    # ------------------------------------------------------------------------------ the six calls
    async def start(self, number: int, lineup: list[AgentSpec]) -> EpisodeSpec | None:
        if self.settings.mode == "manual":
            self.state.phase = "sentence"
            self.state.manual = None
            return None
        items = self.room.services.items_of("coordination", self.settings.dataset)
        order = random.Random(self.settings.seed).sample(range(len(items)), len(items))
        item = items[order[self.state.cursor % len(items)]].as_task()
        spec = self._spec(number, lineup, item)
        self.state.cursor += 1
        return spec

    async def move(self, person: Person | None, msg: Inbound) -> EpisodeSpec | None:
        if isinstance(msg, Restarted):
            manual = self.state.manual
            if self.phase == "proposing" and manual is not None and manual.agents is None:
                # People's proposals were saved as they came; the agents' answers were lost with the server.
                self.room.run_task(self._agents_propose(manual.sentence, manual.word))
            return None
        if person is None:
            return None
        if isinstance(msg, Propose):
            await self._person_proposes(person, msg)
        elif isinstance(msg, CloseProposals):
            await self._close_proposals()
        elif isinstance(msg, Choose):
            self._choose(person, msg)
        elif isinstance(msg, Clarify):
            self._clarify(person, msg)
        elif isinstance(msg, ManualSentence):
            await self._manual_sentence(msg.sentence, msg.word)
        elif isinstance(msg, ManualConfirm):
            return self._manual_confirm(msg.options)
        elif isinstance(msg, EndGame):  # the leader ends manual mode's phases before play (the room saves it)
            self.state.phase = None
            self.state.manual = None
        return None

    def watch(self, current: CurrentGame) -> Watch:
        spec = current.spec
        players = [SeatSeen(name=a.name, kind=a.kind, model=a.model) for a in spec.lineup]
        # The stored item read as the game reads it, so the table shows what the rules will play.
        self.table = GameView(current.number, CoordinationItem.model_validate(spec.item), players)
        return Watch(CoordinationGame(), self.table)

    def _choose(self, person: Person, msg: Choose) -> None:
        found = self.room.seat_request(person)
        if found is None or found[1].kind not in ("choose", "announce"):
            raise AdapterError("not_your_turn", "There is no choice to make now.")
        seat, pending = found
        if pending.round != msg.round:
            raise AdapterError("round_closed", f"Round {msg.round} has not started; this is round {pending.round}."
                               if pending.round is not None and msg.round > pending.round else
                               f"Round {msg.round} is closed; this is round {pending.round}.")
        if msg.choice not in pending.view["options"]:
            raise AdapterError("not_an_option", "That is not one of the meanings on offer.")
        value = {"choice": msg.choice, "justification": " ".join(msg.justification.split())}
        problem = pending.check(value)
        if problem is not None:  # the same schema a model answers: the person can correct it
            raise AdapterError("bad_answer", f"Not accepted: {problem}.")
        seat.submit(value)

    def _clarify(self, person: Person, msg: Clarify) -> None:
        found = self.room.seat_request(person)
        if found is None or found[1].kind != "clarify":
            raise AdapterError("not_your_turn", "No clarification is asked for now.")
        seat, pending = found
        if pending.round != msg.round:
            raise AdapterError("round_closed", f"Round {msg.round} is over.")
        statement = " ".join(msg.statement.split())
        if not statement:
            seat.submit(action="pass")
            return
        problem = pending.check({"statement": statement})
        if problem is not None:
            raise AdapterError("bad_answer", f"Not accepted: {problem}.")
        seat.submit({"statement": statement})

    def _spec(self, number: int, lineup: list[AgentSpec], item: dict[str, Any]) -> EpisodeSpec:
        if len(lineup) < 2:
            raise AdapterError("too_few", "A game needs at least two players: invite someone or add agents.")
        return EpisodeSpec(item_id=str(item["id"]), item=item, settings=self.settings.game_settings(), lineup=lineup,
                           repetition=number)

    # ---------------------------------------------------------------------------------- manual mode
    async def _manual_sentence(self, sentence: str, word: str) -> None:
        if self.phase != "sentence":
            raise AdapterError("wrong_phase", "Start a game in manual mode first.")
        try:
            sentence, word = validate_manual(sentence, word)
        except LexicoordError as exc:
            raise AdapterError("bad_sentence", str(exc)) from None
        people = [a.name for a in self.room.lineup() if a.kind == "human"]
        self.state.manual = ManualState(sentence=sentence, word=word, awaiting=people)
        self.state.phase = "proposing"
        await self.room.save()
        self.room.run_task(self._agents_propose(sentence, word))

    async def _agents_propose(self, sentence: str, word: str) -> None:
        ctx = EpisodeContext(spec=EpisodeSpec(item_id="manual"), seed=self.settings.seed + self.room.games,
                             make_seat=SeatFactory(self.room.services.models))
        seats = [ctx.seat(AgentSpec(name=a.name, model=a.model)) for a in self.settings.agents]
        try:
            proposals = await asyncio.wait_for(gather_proposals(seats, sentence, word), self.settings.agent_timeout)
        except TimeoutError:
            proposals = []
        async with self.room.lock:
            manual = self.state.manual
            if self.phase != "proposing" or manual is None or manual.sentence != sentence:
                return
            manual.agents = proposals
            manual.agents_silent = sorted({s.name for s in seats} - {p.agent for p in proposals})
            await self._proposals_in(close=False)
        self.room.changed()

    async def _person_proposes(self, person: Person, msg: Propose) -> None:
        async with self.room.lock:
            manual = self.state.manual
            if self.phase != "proposing" or manual is None or person.name not in manual.awaiting:
                raise AdapterError("not_your_turn", "There is no meaning to propose now.")
            value = {"meaning": " ".join(msg.meaning.split()), "justification": " ".join(msg.justification.split())}
            problem = propose_request(manual.sentence, manual.word).check(value)
            if problem is not None:  # the same schema a model's proposal meets
                raise AdapterError("bad_answer", f"Not accepted: {problem}.")
            manual.people.append(Proposal(agent=person.name, **value))
            manual.awaiting.remove(person.name)
            await self._proposals_in(close=False)
        self.room.changed()

    async def _close_proposals(self) -> None:
        manual = self.state.manual
        if self.phase != "proposing" or manual is None:
            raise AdapterError("wrong_phase", "No proposals are being collected.")
        if manual.agents is None:
            raise AdapterError("agents_proposing", "The agents are still proposing; close once they are done.")
        await self._proposals_in(close=True)

    async def _proposals_in(self, *, close: bool) -> None:
        """Merge once every agent has answered and every person still in the room has proposed (or the leader
        closes the proposals); people who left, or did not propose before the close, are named as silent.
        Called with the room's lock held."""
        manual = self.state.manual
        assert manual is not None
        present = {a.name for a in self.room.lineup() if a.kind == "human"}
        manual.awaiting = [n for n in manual.awaiting if n in present]
        if manual.agents is None or (manual.awaiting and not close):
            await self.room.save()
            return
        merged = merge_proposals([*manual.people, *manual.agents])
        manual.proposals = merged
        manual.options = [o.text for o in merged]
        manual.silent = sorted({*manual.awaiting, *manual.agents_silent})
        manual.awaiting = []
        self.state.phase = "confirm"
        await self.room.save()

    def _manual_confirm(self, options: list[str]) -> EpisodeSpec:
        manual = self.state.manual
        if self.phase != "confirm" or manual is None:
            raise AdapterError("wrong_phase", "There is no option set to confirm.")
        try:
            item = manual_item(manual.sentence, manual.word, options, item_id=f"manual-{self.room.games + 1}")
        except LexicoordError as exc:
            raise AdapterError("bad_options", str(exc)) from None
        return self._spec(self.room.games + 1, self.room.lineup(), with_proposals(item.as_task(), manual.proposals))

    # --------------------------------------------------------------------------------- views
    def view(self, person: Person | None) -> CoordinationPublic | CoordinationYou:
        return self._public() if person is None else self._you(person)

    def _public(self) -> CoordinationPublic:
        phase = self.phase
        return CoordinationPublic(
            phase=phase, games=self.room.games, mode=self.settings.mode, settings=self._rules,
            manual=self.state.manual.public(phase) if self.state.manual and phase in ("sentence", "proposing",
                                                                                       "confirm") else None,
            game=self.table.public() if self.table is not None else None,
        )

    def _you(self, person: Person) -> CoordinationYou:
        found = self.room.seat_request(person)
        request = Asked(kind=found[1].kind, round=found[1].round) if found is not None else None
        manual = self.state.manual
        if self.phase == "proposing" and manual is not None and person.name in manual.awaiting:
            request = Asked(kind="propose", round=None)
        return CoordinationYou(request=request)

    # ---------------------------------------------------------------------------- statistics
    async def summary(self, ended: tuple[EpisodeRecord, list[Event]] | None = None) -> dict[str, Any]:
        """Read from the store once, then kept up to date game by game."""
        if self.record is None:
            self.record = await self.room.services.rooms.call(
                load_record, self.room.services.store, self.room.run_id, self.settings.clarification_bound
            )
        elif ended is not None:
            self.record.add(*ended)
        return self.record.stats()

    async def export(self, kind: Literal["json", "csv"]) -> dict[str, Any] | str:
        services = self.room.services
        full = await services.rooms.call(room_stats, services.store, self.room.run_id,
                                         self.settings.clarification_bound, None)
        if kind == "csv":
            return history_csv(full["history"])
        return {"room": {"code": self.room.code, "run": self.room.run_id, "mode": self.settings.mode,
                         "settings": self.settings.model_dump(mode="json")}, **full}
