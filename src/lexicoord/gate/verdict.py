"""What a gate answers: one typed verdict, the same object in Python, over HTTP and through MCP.

A pipeline branches on ``status`` and nothing else: only ``clear`` lets it act. Every other field says why
(the agreed reading, the question for a person, who agreed to what, what it cost) and where the full record
is (the run and episode in the store), because a safety review asks "who agreed to what" after the fact.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: ``clear``: the policy's agreement rule said so, and only then. ``ask``: a person must answer ``question``.
#: ``refuse``: no agreement at the bound, or the person said no. ``pending``: still deciding. ``error``: the gate
#: could not decide (timeout, unreachable model, unreadable reply, unknown or expired gate).
Status = Literal["clear", "ask", "refuse", "pending", "error"]

#: Why an instruction is not clear: ``divergent`` (the seats read it differently, or several options stayed in the
#: conformal set), ``underspecified`` (a model or the debate asked for a detail), ``unresolved`` (still no
#: agreement after the clarifications allowed), ``none`` (clear).
Ambiguity = Literal["none", "divergent", "underspecified", "unresolved"]

POLICIES = ("single", "debate", "coalition", "conformal", "adaptive")
Policy = Literal["single", "debate", "coalition", "conformal", "adaptive"]


class SeatStance(BaseModel):
    """One seat's part in the verdict: a model or the person (``simulated`` when an evaluation's person answered
    from the item's gold fields), what it said and in how many rounds."""

    name: str
    kind: Literal["model", "person", "simulated"]
    model: str | None = None
    #: ``clear`` / ``ambiguous`` (a proposal), ``agree`` / ``disagree`` (a follower), ``choose`` (a reading),
    #: ``answer`` (the person), ``failed`` (no valid move).
    stance: str
    choice: str | None = None
    rounds: int = 1


class Clarification(BaseModel):
    """A question put to the person and what they answered."""

    question: str
    options: list[str] = Field(default_factory=list)
    choice: str | None = None
    text: str | None = None
    #: The person declined to clarify (the gate then refuses).
    refused: bool = False

    @property
    def said(self) -> str:
        """The answer as one line, for a prompt (fenced there)."""
        parts = [p for p in (self.choice, self.text) if p]
        return " - ".join(parts) if parts else "(no answer)"


class ConformalSet(BaseModel):
    """KnowNo's prediction set: each option's normalised probability and the threshold that kept it."""

    probabilities: dict[str, float]
    qhat: float
    kept: list[str]
    #: The share of the first token's probability the option letters held, before normalising over them.
    letter_mass: float | None = None


class Decision(BaseModel):
    """What a policy decided (a gate episode's stored outcome): the verdict without its bookkeeping."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["clear", "refuse", "error"]
    reason: str | None = None
    policy: Policy
    interpretation: str | None = None
    options: list[str] = Field(default_factory=list)
    question: str | None = None
    ambiguity: Ambiguity = "none"
    seats: list[SeatStance] = Field(default_factory=list)
    clarifications: list[Clarification] = Field(default_factory=list)
    conformal: ConformalSet | None = None
    #: ``adaptive`` only: the cheap check was unsure and the full policy decided.
    escalated: bool | None = None


class Verdict(BaseModel):
    """A gate's answer to ``check``, ``answer`` or ``get``; act only when ``status == "clear"``."""

    gate_id: str
    key: str | None = None
    status: Status
    #: Why the status is what it is, in one sentence (always set for ``refuse`` and ``error``).
    reason: str | None = None
    policy: Policy
    instruction: str
    #: The agreed reading when clear (an option, or the instruction with the clarifications it took).
    interpretation: str | None = None
    options: list[str] = Field(default_factory=list)
    #: The question for a person when ``ask``.
    question: str | None = None
    #: When ``ask``: the question's number (1 for the first); send it back with the answer
    #: (``answer(..., question=asked)``), so that a retried answer never counts for a later question.
    asked: int | None = None
    ambiguity: Ambiguity = "none"
    seats: list[SeatStance] = Field(default_factory=list)
    clarifications: list[Clarification] = Field(default_factory=list)
    conformal: ConformalSet | None = None
    escalated: bool | None = None
    #: Seconds from the check to this verdict (a person's answering time included once they answered).
    latency_s: float = 0.0
    model_calls: int = 0
    tokens: int = 0
    run_id: str
    #: The episode holding the record (``lexicoord runs show RUN``, the viewer).
    episode_key: str
    #: The person's page when ``ask``, relative to the server (``/g/ID?t=TOKEN``); only its holder may answer.
    answer_path: str | None = None
    #: When an ``ask`` stops waiting for the person (Unix time); after it the gate refuses.
    expires_at: float | None = None
    created_at: float
    updated_at: float

    @property
    def clear(self) -> bool:
        return self.status == "clear"
