"""The players of the coordination game: LLM agents, people at seats, and simulated people.

Every player answers the same three requests: ``choose`` (every round), and for
the leader ``announce`` (round 0) and ``clarify`` (between rounds, optional).
A failed move (a timeout, an unparseable reply after a retry) comes back as a
:class:`Decision` with ``choice=None`` and the reason; it never raises.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Literal

from lexicoord.agents.base import Agent
from lexicoord.agents.human import HumanSeat, SeatTimeout
from lexicoord.agents.llm import LLMAgent
from lexicoord.agents.prompting import fence, render_prompt
from lexicoord.errors import LexicoordError
from lexicoord.models.types import GenerateConfig
from lexicoord.protocols.coordination.views import Decision, RoundView

MAX_JUSTIFICATION = 160


def choice_schema(options: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": options},
            "justification": {"type": "string", "minLength": 1, "maxLength": MAX_JUSTIFICATION},
        },
        "required": ["choice", "justification"],
        "additionalProperties": False,
    }


STATEMENT_SCHEMA = {
    "type": "object",
    "properties": {"statement": {"type": "string", "minLength": 1, "maxLength": 400}},
    "required": ["statement"],
    "additionalProperties": False,
}


class Player:
    """A seat in the game, wrapping the agent that fills it."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        #: Why the last clarification could not be given, if it failed.
        self.last_failure: str | None = None

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def kind(self) -> str:
        return self.agent.kind

    @property
    def simulated(self) -> bool:
        return self.agent.simulated

    @property
    def present(self) -> bool:
        """Whether this player still counts toward convergence (a person may leave a live room)."""
        return True

    def describe(self) -> dict[str, Any]:
        return self.agent.describe()

    async def choose(self, view: RoundView) -> Decision:
        raise NotImplementedError

    async def announce(self, view: RoundView) -> Decision:
        return await self.choose(view)

    async def clarify(self, view: RoundView) -> str | None:
        return None

    async def wants_to_end(self, view: RoundView) -> bool:
        return False


def _context(view: RoundView) -> str:
    """The announcement, every earlier round with the clarification that preceded it, all fenced."""
    parts: list[str] = []
    if view.announcement is not None and view.announcement.choice:
        said = f"{view.announcement.choice}: {view.announcement.justification}"
        parts.append(f"The leader ({view.leader}) announced:\n{fence(said, 'ANNOUNCEMENT')}")
    for past in view.history:
        if past.clarification:
            parts.append(f"Before round {past.round} the leader clarified:\n{fence(past.clarification, 'CLARIFICATION')}")
        lines = [
            f"- {name}: {d.choice or '(no valid choice)'}: {d.justification}" for name, d in past.decisions.items()
        ]
        parts.append(f"Round {past.round}, the players chose:\n{fence(chr(10).join(lines), 'ROUND')}")
    if view.clarification:
        parts.append(f"Now the leader clarifies:\n{fence(view.clarification, 'CLARIFICATION')}")
    return ("\n" + "\n\n".join(parts) + "\n") if parts else ""


def _options(view: RoundView) -> str:
    """The candidate meanings, fenced: they may come from a user's file or from the leader."""
    return fence("\n".join(f"- {o}" for o in view.options), "OPTIONS")


def _word(view: RoundView) -> str:
    return fence(view.word, "WORD")


class LLMPlayer(Player):
    agent: LLMAgent

    def __init__(self, agent: LLMAgent, max_tokens: int = 160) -> None:
        super().__init__(agent)
        self.max_tokens = max_tokens

    async def _decide(self, prompt: str, view: RoundView) -> Decision:
        config = GenerateConfig(json_schema=choice_schema(view.options), max_tokens=self.max_tokens)
        try:
            out = await self.agent.ask_structured(prompt, config)
        except LexicoordError as exc:
            return Decision(choice=None, failure=str(exc))
        if not out.ok:
            return Decision(choice=None, failure=out.parse_error, raw=out.text)
        return Decision(choice=out.parsed["choice"], justification=out.parsed["justification"], raw=out.text)

    async def choose(self, view: RoundView) -> Decision:
        role_note = ""
        if view.leader == self.name and view.announcement and view.announcement.choice:
            role_note = f" You are the leader; you announced the meaning \"{view.announcement.choice}\"."
        prompt = render_prompt(
            "coord_choose", sentence=fence(view.sentence, "SENTENCE"), word=_word(view), options=_options(view),
            context=_context(view), round=str(view.round), role_note=role_note,
        )
        return await self._decide(prompt, view)

    async def announce(self, view: RoundView) -> Decision:
        prompt = render_prompt(
            "coord_announce", sentence=fence(view.sentence, "SENTENCE"), word=_word(view), options=_options(view)
        )
        return await self._decide(prompt, view)

    async def clarify(self, view: RoundView) -> str | None:
        said = view.announcement.choice if view.announcement and view.announcement.choice else "(nothing)"
        prompt = render_prompt(
            "coord_clarify", sentence=fence(view.sentence, "SENTENCE"), word=_word(view), options=_options(view),
            announcement=fence(said, "ANNOUNCEMENT"), context=_context(view),
        )
        self.last_failure = None
        try:
            out = await self.agent.ask_structured(prompt, GenerateConfig(json_schema=STATEMENT_SCHEMA, max_tokens=120))
        except LexicoordError as exc:
            self.last_failure = str(exc)
            return None
        if not out.ok:
            self.last_failure = f"{out.parse_error} (raw: {out.text[:300]!r})"
            return None
        return out.parsed["statement"]


class HumanPlayer(Player):
    """A person at a :class:`HumanSeat`; front ends answer ``{"choice", "justification"}``."""

    agent: HumanSeat

    def __init__(self, agent: HumanSeat) -> None:
        super().__init__(agent)
        self._end = False

    def _decision(self, answer: Any, view: RoundView) -> Decision:
        if isinstance(answer, dict) and answer.get("choice") in view.options:
            return Decision(choice=answer["choice"], justification=str(answer.get("justification", ""))[:MAX_JUSTIFICATION])
        return Decision(choice=None, failure=f"not one of the options: {str(answer)[:200]}", raw=str(answer)[:2000])

    async def _move(self, kind: str, view: RoundView) -> Decision:
        try:
            return self._decision(await self.agent.request({"kind": kind, **view.model_dump()}), view)
        except SeatTimeout as exc:
            return Decision(choice=None, failure=str(exc))

    async def choose(self, view: RoundView) -> Decision:
        return await self._move("choose", view)

    async def announce(self, view: RoundView) -> Decision:
        return await self._move("announce", view)

    async def clarify(self, view: RoundView) -> str | None:
        try:
            answer = await self.agent.request({"kind": "clarify", **view.model_dump()})
        except SeatTimeout:
            return None
        if isinstance(answer, dict) and answer.get("end"):
            self._end = True
            return None
        statement = answer.get("statement") if isinstance(answer, dict) else answer
        return str(statement)[:400] if statement else None

    async def wants_to_end(self, view: RoundView) -> bool:
        return self._end


Policy = Literal["first", "intended", "follow-leader", "majority", "stubborn", "noisy", "random"]
POLICIES: dict[str, str] = {
    "first": "always the first listed meaning (a fixed default reading)",
    "intended": "the meaning the sentence settles when known, else the first (an attentive reader)",
    "follow-leader": "the leader's announced meaning",
    "majority": "the leader's announcement first, then the previous round's most common choice",
    "stubborn": "a random meaning in round 1, kept to the end",
    "noisy": "like majority, but with probability p a random meaning",
    "random": "a random meaning every round",
}


class SimulatedAgent(Agent):
    """Stands in for a person in campaigns; marked simulated in every record and report."""

    kind = "simulated"
    simulated = True

    def __init__(self, name: str, policy: Policy, *, p: float = 0.2, role: str | None = None) -> None:
        if policy not in POLICIES:
            raise LexicoordError(f"Unknown simulated-human policy '{policy}'; known: {', '.join(POLICIES)}.")
        super().__init__(name, role)
        self.policy = policy
        self.p = p

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "policy": self.policy, "p": self.p}


class SimulatedPlayer(Player):
    agent: SimulatedAgent

    def __init__(self, agent: SimulatedAgent, rng: random.Random, intended: str | None = None) -> None:
        super().__init__(agent)
        self.rng = rng
        self.intended = intended
        self._kept: str | None = None

    def _pick(self, view: RoundView) -> str:
        policy = self.agent.policy
        announced = view.announcement.choice if view.announcement else None
        if policy == "first":
            return view.options[0]
        if policy == "intended":
            return self.intended or view.options[0]
        if policy == "follow-leader":
            return announced or view.options[0]
        if policy == "random":
            return self.rng.choice(view.options)
        if policy == "stubborn":
            self._kept = self._kept or self.rng.choice(view.options)
            return self._kept
        if policy == "noisy" and self.rng.random() < self.agent.p:
            return self.rng.choice(view.options)
        # majority (and noisy otherwise)
        if view.history:
            counts = Counter(d.choice for d in view.history[-1].decisions.values() if d.choice)
            if counts:
                top = max(counts.values())
                leading = [c for c in view.options if counts.get(c) == top]
                return announced if announced in leading else leading[0]
        return announced or view.options[0]

    async def choose(self, view: RoundView) -> Decision:
        choice = self._pick(view)
        return Decision(choice=choice, justification=f"simulated ({self.agent.policy})")

    async def clarify(self, view: RoundView) -> str | None:
        announced = view.announcement.choice if view.announcement else None
        return f'By "{view.word}" I mean {announced}.' if announced else None
