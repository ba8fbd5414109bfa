"""Deterministic replies for testing protocol rules (never a stand-in for a model's behaviour).

A script is a list of replies (served in order), a callable of the
conversation ``(messages, config) -> str | dict``, or a mapping from agent
name to either; a mapping keeps concurrent agents from taking each other's
replies. Running out is an error that says which agent asked for what.
Usage is synthetic: whitespace-separated words counted as tokens, and a reply longer than the call's
``max_tokens`` is cut there with ``finish_reason="length"``, as a backend cuts it.

Specs: ``scripted/echo`` (repeats the last user message), ``scripted/first``
(the first of the offered choices, or of each enum in a JSON schema), ``scripted/random`` (a choice, or a value
valid under a simple JSON schema, drawn with the call's seed), or any name given to :func:`register_script`. The option
``latency`` (seconds) makes every reply take that long.

Log-probabilities: a reply ``{"text": "B", "__logprobs__": {"B": -0.2, "A": -1.9}}`` is the text ``B`` (a
``"text"`` that is a dict or list is sent as its JSON, as any other reply) with those first-token log-probabilities
(token text -> natural log). A call with ``logprobs=k`` gets the ``k`` largest of them; a call without gets none, and a
reply without ``"__logprobs__"`` gives none (so a call that asks for them fails with the model layer's error).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lexicoord.errors import ModelNotFoundError, ScriptExhaustedError
from lexicoord.models.observe import current_agent
from lexicoord.models.provider import Provider
from lexicoord.models.types import ChatMessage, GenerateConfig, ProviderResponse, Usage

Reply = str | dict[str, Any] | list[Any]
#: A reply ``{"text": "A", "__logprobs__": {"A": -0.1, "B": -2.3}}`` is the text ``A`` with those first-token
#: log-probabilities (returned when the call asks for ``logprobs``).
LOGPROBS = "__logprobs__"
ReplyFn = Callable[[Sequence[ChatMessage], GenerateConfig], Reply]
Script = Sequence[Reply] | ReplyFn | dict[str, Sequence[Reply] | ReplyFn]


def _last_user(messages: Sequence[ChatMessage]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def _echo(messages: Sequence[ChatMessage], config: GenerateConfig) -> Reply:
    return _last_user(messages)


def _first(messages: Sequence[ChatMessage], config: GenerateConfig) -> Reply:
    if config.choices:
        return {"choice": config.choices[0]}
    if config.json_schema:
        sample: Reply = _sample(config.json_schema, random.Random(0), first=True)
        return sample
    raise ScriptExhaustedError("scripted/first needs a call that offers choices or a JSON schema.")


def _sample(schema: dict[str, Any], rng: random.Random, first: bool = False) -> Any:
    """A value valid under the simple schemas protocols use (objects, enums, strings, numbers)."""
    if "enum" in schema:
        return schema["enum"][0] if first else rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        return {k: _sample(v, rng, first) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_sample(schema.get("items", {}), rng, first) for _ in range(schema.get("minItems", 1))]
    if kind in ("integer", "number"):
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 9)))
    if kind == "boolean":
        return rng.random() < 0.5
    return f"scripted reason {rng.randrange(1000)}"


def _random(messages: Sequence[ChatMessage], config: GenerateConfig) -> Reply:
    seed_text = f"{config.seed}|{json.dumps([m.model_dump() for m in messages])}"
    rng = random.Random(int(hashlib.sha256(seed_text.encode()).hexdigest()[:16], 16))
    if config.choices:
        return {"choice": rng.choice(config.choices)}
    if config.json_schema:
        sample: Reply = _sample(config.json_schema, rng)
        return sample
    return f"reply {rng.randrange(10**6)}"


_scripts: dict[str, Script] = {"echo": _echo, "first": _first, "random": _random}


def register_script(name: str, script: Script) -> None:
    """Make ``scripted/<name>`` serve ``script``; each Model made from it starts the lists afresh."""
    _scripts[name] = script


class ScriptedProvider(Provider):
    default_concurrency = 10_000

    def __init__(self, model_name: str, script: Script, *, latency: float = 0.0, keep_calls: bool = False) -> None:
        super().__init__("scripted", model_name)
        self.latency = float(latency)
        #: Each call's agent and prompt, in order, when ``keep_calls`` (a test reading what a seat was shown).
        #: Off otherwise: a long scripted campaign would keep every prompt it sent, and a model's memory must not
        #: grow with the number of calls (the run's events already record them).
        self.keep_calls = keep_calls
        self.calls: list[tuple[str | None, list[ChatMessage]]] = []
        self._lock = threading.Lock()
        if isinstance(script, dict):
            self._by_agent = {k: self._source(v) for k, v in script.items()}
            self._default = None
        else:
            self._by_agent = {}
            self._default = self._source(script)

    @staticmethod
    def _source(script: Sequence[Reply] | ReplyFn) -> ReplyFn:
        if callable(script):
            return script
        replies = list(script)
        position = [0]

        def next_reply(messages: Sequence[ChatMessage], config: GenerateConfig) -> Reply:
            if position[0] >= len(replies):
                agent = current_agent.get()
                who = f" for agent '{agent}'" if agent else ""
                raise ScriptExhaustedError(
                    f"Scripted model ran out of replies{who} after {len(replies)}; the last prompt was: "
                    f"{_last_user(messages)[:200]!r}."
                )
            position[0] += 1
            return replies[position[0] - 1]

        return next_reply

    def _pick(self) -> ReplyFn:
        agent = current_agent.get()
        if self._by_agent:
            if agent not in self._by_agent:
                raise ScriptExhaustedError(
                    f"Scripted model has no replies for agent '{agent}' (it has: {', '.join(self._by_agent)})."
                )
            return self._by_agent[agent]
        assert self._default is not None
        return self._default

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> ProviderResponse:
        if self.latency:
            await asyncio.sleep(self.latency)
        with self._lock:
            if self.keep_calls:
                self.calls.append((current_agent.get(), list(messages)))
            reply = self._pick()(messages, config)
        logprobs = None
        if isinstance(reply, dict) and LOGPROBS in reply:  # a scorer's reply: its text and its first token's odds
            odds = {str(k): float(v) for k, v in dict(reply[LOGPROBS]).items()}
            # At most the ``logprobs`` most likely, as a backend gives them.
            logprobs = dict(sorted(odds.items(), key=lambda kv: -kv[1])[: config.logprobs or len(odds)]) or None
            reply = reply.get("text", "")
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_words = sum(len(m.content.split()) for m in messages)
        words = text.split()
        cut = config.max_tokens is not None and len(words) > config.max_tokens
        if cut:  # as a backend does at the limit: the first max_tokens "tokens", and finish_reason "length"
            text = " ".join(words[: config.max_tokens])
        return ProviderResponse(
            text=text,
            usage=Usage(prompt_tokens=prompt_words, completion_tokens=len(text.split())),
            model=self.spec,
            finish_reason="length" if cut else "stop",
            top_logprobs=logprobs if config.logprobs is not None else None,
        )


def scripted_provider(model_name: str, *, script: Script | None = None, latency: float = 0.0) -> ScriptedProvider:
    if script is None:
        if model_name not in _scripts:
            known = ", ".join(sorted(_scripts))
            raise ModelNotFoundError(
                f"No script named 'scripted/{model_name}'; known: {known} (or call register_script)."
            )
        script = _scripts[model_name]
    return ScriptedProvider(model_name, script, latency=latency)


def register() -> None:
    from lexicoord.models.registry import register_provider

    register_provider(
        "scripted",
        scripted_provider,
        description="deterministic replies for testing protocol rules (not a model)",
        examples=["scripted/echo", "scripted/first", "scripted/random"],
        details={"models": "echo, first, random, or a registered script"},
    )
