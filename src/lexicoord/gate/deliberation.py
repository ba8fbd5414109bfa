"""What every policy shares: the instruction as the seats may see it, the person's seat, nested episodes.

A policy is a thin use of a protocol's own rules: it plays that protocol inside the gate's episode (a nested
context that shares the episode's recorder, so the debate's proposals or the game's choices are this
episode's events) and reads its outcome. What the protocols do not have is here once: asking the person (the
deadline pauses while a person reads), the scene with the clarifications so far, and the readings of an
instruction when the caller gave none.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from lexicoord.core.context import EpisodeContext, SeatMaker
from lexicoord.core.seat import Request, Seat
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import LexicoordError
from lexicoord.gate.events import PersonAnswerEvent, QuestionEvent
from lexicoord.gate.items import GateItem
from lexicoord.gate.settings import GateSettings
from lexicoord.gate.verdict import Ambiguity, Clarification, SeatStance
from lexicoord.prompting import Prompts, fence

PROMPTS = Prompts("lexicoord.gate")
#: The person's seat in every gate's line-up.
PERSON = "person"
MAX_ANSWER = 400
#: The questions the conformal and coalition policies put with their options (the options are the question); a
#: model writes the question only in ``single`` and ``debate``.
SET_QUESTION = "Which of these do you mean?"
DIVERGED_QUESTION = "Your instruction can be read in more than one way. Which do you mean?"
MAX_OPTIONS = 8
MAX_OPTION = 300


class Unanswered(Exception):
    """The person did not answer in time (or their answer could not be read): the gate refuses."""


class Declined(Exception):
    """The person declined to clarify: the gate refuses."""


def person_schema(options: Sequence[str]) -> dict[str, Any]:
    """An answer is an option, a free text, or both; at least one."""
    properties: dict[str, Any] = {"text": {"type": "string", "minLength": 1, "maxLength": MAX_ANSWER}}
    if options:
        properties["choice"] = {"type": "string", "enum": list(options)}
    return {"type": "object", "properties": properties, "minProperties": 1, "additionalProperties": False}


OPTIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"readings": {"type": "array", "minItems": 2, "maxItems": 4,
                                "items": {"type": "string", "minLength": 3, "maxLength": 160}}},
    "required": ["readings"],
    "additionalProperties": False,
}


def scene_text(context: str, candidates: Sequence[str], clarifications: Sequence[Clarification] = ()) -> str:
    """The scene as every policy's seats read it (and as calibration scores it, so that the threshold is computed
    on the prompts the check will send)."""
    parts = [context.strip() or "(no context given)"]
    if candidates:
        parts.append("Possible readings: " + "; ".join(candidates))
    for c in clarifications:
        parts.append(f"The person was asked: {c.question}\nThe person answered: {c.said}")
    return "\n\n".join(parts)


class Nested(BaseModel):
    """A protocol's episode played inside the gate's: its item, settings and seats."""

    item: dict[str, Any]
    settings: dict[str, Any]
    lineup: list[AgentSpec]


@dataclass
class Deliberation:
    ctx: EpisodeContext[GateItem]
    settings: GateSettings
    deadline: asyncio.Timeout | None = None
    clarifications: list[Clarification] = field(default_factory=list)
    _person: Seat | None = None
    _nested: int = 0
    _readings: list[str] | None = None
    _passes: Counter[str] = field(default_factory=Counter)

    @property
    def instruction(self) -> str:
        return self.ctx.item.instruction

    @property
    def context(self) -> str:
        return self.ctx.item.context

    @property
    def candidates(self) -> list[str]:
        return list(self.ctx.item.candidates or [])

    def seats(self, role: str) -> list[AgentSpec]:
        """The line-up's model seats of ``role`` (``agent``, ``leader``, ``follower``, ``player``, ``scorer``)."""
        return [s for s in self.ctx.spec.lineup if s.role == role]

    def scene(self) -> str:
        """What the seats read as the scene: the caller's context, the readings offered, what the person said
        so far (all of it one fenced block in the protocols' prompts)."""
        return scene_text(self.context, self.candidates, self.clarifications)

    def reading(self) -> str:
        """The instruction as agreed: with the person's answers when it took some."""
        if not self.clarifications:
            return self.instruction
        said = "; ".join(c.said for c in self.clarifications)
        return f"{self.instruction} (clarified: {said})"

    def nested(self, play: Nested, make_seat: SeatMaker | None = None) -> EpisodeContext:
        """A context for a protocol played inside this episode: same recorder, its own seed and seats.

        A seat that played an earlier pass gets its pass number (``leader-2``), so each seat's journal (answers
        kept for a replay after a restart) and conversation are its own."""
        self._nested += 1
        lineup = []
        for s in play.lineup:
            if s.name != self.person_spec.name:
                self._passes[s.name] += 1
                if self._passes[s.name] > 1:
                    s = s.model_copy(update={"name": f"{s.name}-{self._passes[s.name]}"})
            lineup.append(s)
        spec = EpisodeSpec(item_id=self.ctx.spec.item_id, item=play.item, settings=play.settings, lineup=lineup)
        return EpisodeContext(spec=spec, seed=self.ctx.seed + self._nested, make_seat=make_seat or self.ctx.make_seat,
                              recorder=self.ctx.recorder, control=self.ctx.control, groups=self.ctx.groups)

    @property
    def person_spec(self) -> AgentSpec:
        """The line-up's person: a person at a page or keyboard, or a simulated one in an evaluation (its own kind
        and name, so a reader of the record tells its moves from a real person's)."""
        return next((s for s in self.ctx.spec.lineup if s.role == "person"),
                    AgentSpec(name=PERSON, kind="human", role="person"))

    @property
    def person_kind(self) -> str:
        return "simulated" if self.person_spec.kind == "simulated" else "person"

    def person(self) -> Seat:
        if self._person is None:
            self._person = self.ctx.seat(self.person_spec)
        return self._person

    async def ask(self, question: str, options: Sequence[str], ambiguity: Ambiguity,
                  seats: Sequence[SeatStance]) -> Clarification:
        """Put ``question`` to the person and wait; the models' deadline stops while the person reads.

        Raises :class:`Declined` or :class:`Unanswered`: the policy never has to decide what a missing answer
        means, the gate refuses."""
        question = question.strip() or "What exactly do you want done?"
        options = list(dict.fromkeys(o for o in options if o))[:MAX_OPTIONS]
        self.ctx.emit(QuestionEvent(question=question, options=options, ambiguity=ambiguity))
        view = {"instruction": self.instruction, "context": self.context, "question": question, "options": options,
                "ambiguity": ambiguity, "seats": [s.model_dump(mode="json") for s in seats],
                "asked": len(self.clarifications) + 1,
                "clarifications": [c.model_dump(mode="json") for c in self.clarifications]}
        request = Request(kind="clarify", view=view, schema=person_schema(options), actions=("refuse",))
        loop = asyncio.get_running_loop()
        if self.deadline is not None:
            self.deadline.reschedule(None)
        try:
            answer = await self.person().answer(request)
        finally:
            if self.deadline is not None:
                self.deadline.reschedule(loop.time() + self.settings.timeout)
        if answer.action == "refuse":
            self.ctx.emit(PersonAnswerEvent(agent=self.person_spec.name, refused=True))
            self.clarifications.append(Clarification(question=question, options=options, refused=True))
            raise Declined("the person declined to clarify")
        if not answer.ok or answer.value is None:
            raise Unanswered(answer.failure or "the person gave no answer")
        choice, text = answer.value.get("choice"), answer.value.get("text")
        self.ctx.emit(PersonAnswerEvent(agent=self.person_spec.name, choice=choice, text=text))
        said = Clarification(question=question, options=options, choice=choice, text=text)
        self.clarifications.append(said)
        return said

    async def readings(self) -> list[str]:
        """The caller's candidates, or two to four readings written by the line-up's writer seat."""
        if self.candidates:
            return self.candidates
        if self._readings is None:
            self._readings = await self._written()
        return self._readings

    async def _written(self) -> list[str]:
        spec = self.seats("writer")[0]
        writer = self.ctx.seat(spec, system_prompt=PROMPTS.render("gate_system"))
        prompt = PROMPTS.render("gate_readings", scene=fence(self.scene(), "SCENE"),
                               instruction=fence(self.instruction, "INSTRUCTION"))
        answer = await writer.answer(Request(kind="readings", prompt=prompt, schema=OPTIONS_SCHEMA, max_tokens=200,
                                             temperature=0.0))
        if not answer.ok or answer.value is None:
            raise LexicoordError(f"{spec.name} could not list the instruction's readings: {answer.failure}")
        readings = list(dict.fromkeys(str(r).strip() for r in answer.value["readings"] if str(r).strip()))
        if len(readings) < 2:
            raise LexicoordError(f"{spec.name} listed fewer than two distinct readings of the instruction")
        return readings[:MAX_OPTIONS]
