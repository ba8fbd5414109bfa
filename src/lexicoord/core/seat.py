"""One request that any seat can answer: a model, a person, or a simulated person.

A protocol asks a seat for a move with a :class:`Request`: what is asked, the
view that seat may see, the prompt a model reads (built from that view), and a
JSON schema for the answer. The seat answers with an :class:`Answer`. A
protocol never asks what kind of seat it talks to: an LLM seat answers through
structured output, a person through a terminal or a browser (checked against
the same schema, so the same length limits hold everywhere), a simulated seat
through its stated policy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.core.schema_check import first_error


class Request(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    #: What is asked (``choose``, ``announce``, ``clarify``, ``propose``, ``review`` ...).
    kind: str
    round: int | None = None
    #: What this seat may see, as data: front ends render it, simulated policies read it.
    view: dict[str, Any] = Field(default_factory=dict)
    #: The prompt for a model seat, built by the protocol from ``view`` only.
    prompt: str = ""
    #: JSON schema of the answer; ``choices`` instead asks for one of a closed set (answer ``{"choice": ...}``);
    #: with neither, the answer is free text (``{"text": ...}``).
    answer_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    choices: tuple[str, ...] | None = None
    #: What a seat may do instead of answering (``pass``: nothing to say; ``end``: end the game).
    actions: tuple[str, ...] = ()
    #: Generation hints for model seats; a temperature set on the seat itself wins.
    max_tokens: int | None = None
    temperature: float | None = None
    #: A model seat's seed for this call, instead of its own: a protocol gives two episodes' calls one seed when they
    #: must start alike (COGENT's round 0 under every variant), so the same prompt gets the same reply.
    seed: int | None = None
    #: Keep this exchange in the seat's own conversation (multi-round protocols).
    remember: bool = False
    #: Ask a model seat for its first token's top log-probabilities (a scorer reads the probability of each
    #: option's letter): the answer's value is ``{"text": ..., "logprobs": {token: logprob}}``.
    logprobs: int | None = Field(default=None, ge=1, le=20)

    def schema_for_answer(self) -> dict[str, Any]:
        if self.answer_schema is not None:
            return self.answer_schema
        if self.choices is not None:
            return {"type": "object", "properties": {"choice": {"type": "string", "enum": list(self.choices)}},
                    "required": ["choice"], "additionalProperties": False}
        return {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    def check(self, value: Any) -> str | None:
        """Why ``value`` does not answer this request, or ``None`` when it does."""
        error = first_error(value, self.schema_for_answer())
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path)
            limits = {"maxLength": "longer than the limit of {} characters",
                      "minLength": "shorter than the minimum of {} character(s)", "enum": "is not one of: {}"}
            if error.validator in limits:  # name the limit, never echo a long text back
                # Set whenever ``validator`` is: the schema's value for that keyword (the enum's list, a length).
                limit: Any = error.validator_value
                shown = ", ".join(map(str, limit)) if error.validator == "enum" else limit
                message = limits[str(error.validator)].format(shown)
            else:
                message = error.message
            return f"{where}: {message}" if where else message
        return None


class Answer(BaseModel):
    """A seat's answer: a value that passed the request's schema, an action, or a failure with the raw text."""

    value: dict[str, Any] | None = None
    action: str | None = None
    failure: str | None = None
    raw: str | None = None
    #: Output tokens as the backend counted them (``None``: a person, or a backend that does not say);
    #: length metrics read this so that they count what the model was billed for.
    tokens: int | None = None
    #: The backend stopped at the request's token limit, so the text is cut short: reports count such replies,
    #: since a length metric over cut replies measures the limit, not the model.
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.failure is None and self.value is not None


class SeatInfo(BaseModel):
    """Who sat in a seat, as an outcome records it: a kind's own facts (a model, a policy) ride along."""

    model_config = ConfigDict(extra="allow")

    name: str
    kind: str
    role: str | None = None
    #: Stands in for a person (a simulated person): reported as such everywhere.
    simulated: bool = False
    model: str | None = None


class Seat(ABC):
    """A participant the protocol can ask; ``simulated`` marks seats that stand in for a person."""

    kind: str = "seat"
    simulated: bool = False

    def __init__(self, name: str, role: str | None = None) -> None:
        self.name = name
        self.role = role

    @property
    def present(self) -> bool:
        """Whether the seat still counts in the game (a person may leave a live room)."""
        return True

    @abstractmethod
    async def answer(self, request: Request) -> Answer:
        """Answer ``request``; a failed move is an :class:`Answer` with ``failure``.

        A model that cannot be reached raises (:class:`~lexicoord.errors.LexicoordError`):
        the protocol decides whether that fails a move or the episode.
        """

    async def replayed(self, request: Request, answer: Answer) -> None:
        """``request`` was answered from a journal, not by this seat: bring the seat's own state (a model's
        conversation, a policy's random stream) to where answering it would have left it."""

    def describe(self) -> SeatInfo:
        return SeatInfo(name=self.name, kind=self.kind, role=self.role, simulated=self.simulated)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
