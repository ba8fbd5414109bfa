"""What the agents of an leader-follower debate answer, and the events that record it.

A proposal (the leader, or a single agent) is reasoning, a verdict (``clear`` or
``ambiguous``) and, when ambiguous, the one clarifying question to ask. A
follower's feedback is a stance (``agree`` / ``disagree``), reasoning and,
when disagreeing, an optional alternative question. Both are asked for as JSON
under a schema, so backends that constrain decoding always return parseable
replies; the rest are parsed, and a reply that still does not parse is kept
with its raw text.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from lexicoord.core.audience import Audience
from lexicoord.core.events import Event, event_type
from lexicoord.core.seat import Request, Seat
from lexicoord.prompting import fence

MAX_REASONING = 700
MAX_QUESTION = 240

PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "minLength": 1, "maxLength": MAX_REASONING},
        "verdict": {"type": "string", "enum": ["clear", "ambiguous"]},
        "question": {"type": "string", "maxLength": MAX_QUESTION},
    },
    "required": ["reasoning", "verdict", "question"],
    "additionalProperties": False,
}

FEEDBACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "stance": {"type": "string", "enum": ["agree", "disagree"]},
        "reasoning": {"type": "string", "minLength": 1, "maxLength": MAX_REASONING},
        "alternative": {"type": "string", "maxLength": MAX_QUESTION},
    },
    "required": ["stance", "reasoning", "alternative"],
    "additionalProperties": False,
}


def sentences(text: str) -> int:
    """How many sentences ``text`` has (a run of . ! ? ends one; a trailing fragment counts)."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    return len(parts)


class Proposal(BaseModel):
    reasoning: str = ""
    verdict: Literal["clear", "ambiguous"] | None = None
    question: str = ""
    failure: str | None = None
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def shown(self) -> str:
        """The proposal as others read it, fenced: it is model text."""
        ask = f"\nQuestion: {self.question}" if self.verdict == "ambiguous" else ""
        return fence(f"Reasoning: {self.reasoning}\nVerdict: {self.verdict}{ask}", "PROPOSAL")


class Feedback(BaseModel):
    stance: Literal["agree", "disagree"] | None = None
    reasoning: str = ""
    alternative: str = ""
    failure: str | None = None
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@event_type
class ProposalEvent(Event):
    """A leader's (or a single agent's) proposal; ``failure`` with ``raw`` when it could not be read."""

    type: str = "proposal"
    role: str = "leader"
    reasoning: str = ""
    verdict: str | None = None
    question: str = ""
    sentences: int = 0
    failure: str | None = None
    raw: str | None = None

    def line(self) -> str:
        if self.failure:
            return f"unreadable proposal ({self.failure}); raw: {(self.raw or '')[:200]!r}"
        ask = f": {self.question}" if self.question else ""
        return f"{self.role} proposes {self.verdict}{ask} ({self.reasoning})"


@event_type
class FeedbackEvent(Event):
    type: str = "feedback"
    stance: str | None = None
    reasoning: str = ""
    alternative: str = ""
    failure: str | None = None
    raw: str | None = None

    def line(self) -> str:
        if self.failure:
            return f"unreadable feedback ({self.failure}); raw: {(self.raw or '')[:200]!r}"
        alt = f"; alternative: {self.alternative}" if self.alternative else ""
        return f"{self.stance}s ({self.reasoning}){alt}"


@event_type
class JudgeEvent(Event):
    """An LLM judge's opinion on whether the final question asks about the ambiguous slot."""

    type: str = "judge"
    model: str = ""
    asks_slot: bool | None = None
    raw: str | None = None
    failure: str | None = None

    def line(self) -> str:
        if self.asks_slot is None:  # unreachable or unreadable: no verdict, and never a "no"
            return f"judge {self.model}: the judge failed ({self.failure or 'no verdict'})"
        said = "asks about the ambiguity" if self.asks_slot else "does not ask about it"
        return f"judge {self.model}: the question {said}"


class ReplySettings(BaseModel):
    """Generation settings of every debate call (the paper: temperature 0.5, 350 tokens)."""

    temperature: float = Field(default=0.5, ge=0, le=2)
    max_tokens: int = Field(default=350, ge=16, le=8192)
    sentences: int = Field(default=4, ge=1, le=20)


def proposal_request(prompt: str, view: dict[str, Any], settings: ReplySettings, round_: int) -> Request:
    """A proposal (the leader's, or a single agent's), remembered in the seat's own conversation."""
    return Request(kind="propose", round=round_, view=view, prompt=prompt, schema=PROPOSAL_SCHEMA,
                   max_tokens=settings.max_tokens, temperature=settings.temperature, remember=True)


def feedback_request(prompt: str, view: dict[str, Any], settings: ReplySettings, round_: int) -> Request:
    return Request(kind="review", round=round_, view=view, prompt=prompt, schema=FEEDBACK_SCHEMA,
                   max_tokens=settings.max_tokens, temperature=settings.temperature, remember=True)


async def ask_proposal(seat: Seat, request: Request) -> Proposal:
    """A proposal; a reply that does not parse is kept with its raw text, a model that fails raises."""
    answer = await seat.answer(request)
    if not answer.ok or answer.value is None:
        return Proposal(failure=answer.failure or f"no proposal ({answer.action})", raw=answer.raw)
    data = answer.value
    question = " ".join(str(data.get("question", "")).split())
    verdict = data["verdict"]
    return Proposal(reasoning=" ".join(data["reasoning"].split()), verdict=verdict,
                    question=question if verdict == "ambiguous" else "", raw=answer.raw)


async def ask_feedback(seat: Seat, request: Request) -> Feedback:
    answer = await seat.answer(request)
    if not answer.ok or answer.value is None:
        return Feedback(failure=answer.failure or f"no feedback ({answer.action})", raw=answer.raw)
    data = answer.value
    stance = data["stance"]
    alternative = " ".join(str(data.get("alternative", "")).split())
    return Feedback(stance=stance, reasoning=" ".join(data["reasoning"].split()),
                    alternative=alternative if stance == "disagree" else "", raw=answer.raw)


def proposal_event(agent: str, round_: int, proposal: Proposal, role: str) -> ProposalEvent:
    return ProposalEvent(agent=agent, round=round_, role=role, reasoning=proposal.reasoning, verdict=proposal.verdict,
                         question=proposal.question, sentences=sentences(proposal.reasoning),
                         failure=proposal.failure, raw=proposal.raw)


def feedback_event(agent: str, leader: str, round_: int, feedback: Feedback) -> FeedbackEvent:
    """Feedback goes to the leader: the author and the leader see it, the other followers do not."""
    return FeedbackEvent(agent=agent, round=round_, stance=feedback.stance, reasoning=feedback.reasoning,
                         alternative=feedback.alternative, failure=feedback.failure, raw=feedback.raw,
                         audience=Audience.only(leader, agent))


def proposal_from(event: ProposalEvent) -> Proposal:
    return Proposal(reasoning=event.reasoning, verdict=event.verdict,
                    question=event.question, failure=event.failure, raw=event.raw)


def feedback_from(event: FeedbackEvent) -> Feedback:
    return Feedback(stance=event.stance, reasoning=event.reasoning,
                    alternative=event.alternative, failure=event.failure, raw=event.raw)
