"""The data that crosses the model boundary: messages in, one output out."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


def system(content: str) -> ChatMessage:
    return ChatMessage(role="system", content=content)


def user(content: str) -> ChatMessage:
    return ChatMessage(role="user", content=content)


def assistant(content: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=content)


class GenerateConfig(BaseModel):
    """Per-call settings.

    ``json_schema`` asks for JSON that validates against the schema; ``choices``
    asks for exactly one of a closed set of strings. Backends that can constrain
    decoding (llama.cpp grammars, OpenAI ``response_format``) do; the rest are
    parsed from free text. ``timeout`` and ``max_retries`` are transport
    settings and are not part of the cache key.
    """

    model_config = ConfigDict(frozen=True)

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    json_schema: dict[str, Any] | None = None
    choices: tuple[str, ...] | None = None
    #: Ask for the first generated token's ``logprobs`` most likely alternatives with their log-probabilities (a
    #: scorer reads an option letter's probability from them, as KnowNo does); part of the cache key.
    logprobs: int | None = Field(default=None, ge=1, le=20)
    timeout: float | None = Field(default=None, description="seconds per attempt")
    max_retries: int | None = None

    def merged(self, other: GenerateConfig | None = None, **overrides: Any) -> GenerateConfig:
        """This config with the set fields of ``other`` and ``overrides`` on top."""
        # This runs several times on every model call. Both configs were validated when they were made, so
        # without overrides the result is a copy with ``other``'s fields laid over (no validation again).
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if not overrides and other is not None and not self.is_set():
            return other  # the usual case: a model or seat with no settings of its own
        update = {} if other is None or other is self else {k: v for k, v in other.__dict__.items() if v is not None}
        if overrides:
            mine = {k: v for k, v in self.__dict__.items() if v is not None}
            return GenerateConfig(**{**mine, **update, **overrides})
        return self.model_copy(update=update) if update else self

    def is_set(self) -> bool:
        """Whether any field is set."""
        return any(v is not None for v in self.__dict__.values())

    def cache_fields(self) -> dict[str, Any]:
        # ``logprobs`` is in the key only when asked for: a call without it keeps the key it had before the field
        # existed, so replies cached by earlier versions are still found (and re-running a run still replays).
        exclude = {"timeout", "max_retries"} if self.logprobs is not None else {"timeout", "max_retries", "logprobs"}
        return self.model_dump(exclude=exclude, mode="json")



class Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class ProviderResponse(BaseModel):
    """What a provider returns: the raw completion, before any parsing."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    finish_reason: str | None = None
    #: The first generated token's most likely alternatives, token text -> natural-log probability (when asked).
    top_logprobs: dict[str, float] | None = None


class ModelOutput(BaseModel):
    """One completion as callers see it.

    ``parsed`` holds the JSON when a schema or choices were asked for and the
    reply could be parsed and validated; otherwise ``parse_error`` says why and
    ``text`` keeps the raw reply, so nothing is lost.
    """

    model: str
    text: str
    parsed: Any = None
    choice: str | None = None
    parse_error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency: float = 0.0
    cached: bool = False
    attempts: int = 1
    finish_reason: str | None = None
    #: The first generated token's most likely alternatives, token text -> natural-log probability (when asked).
    top_logprobs: dict[str, float] | None = None

    @property
    def ok(self) -> bool:
        return self.parse_error is None
