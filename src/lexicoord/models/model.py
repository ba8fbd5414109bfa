"""The Model: a provider plus everything callers should never do themselves.

Retries with backoff (honouring ``Retry-After``), per-attempt timeouts, the
response cache, the provider's concurrency limit, the model's rate budget, parsing of
structured replies, and reporting each call to the episode's observer all live here, once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

from lexicoord.errors import (
    ConfigError,
    LexicoordError,
    ModelError,
    ModelTimeoutError,
    ProviderHTTPError,
    ServerUnreachableError,
)
from lexicoord.models.budget import Budget
from lexicoord.models.cache import Cache, cache_key
from lexicoord.models.limits import limiter
from lexicoord.models.observe import ModelCallRecord, current_agent, report
from lexicoord.models.provider import Provider, TransientError
from lexicoord.models.structured import check_schema, parse_reply, requested_schema
from lexicoord.models.types import ChatMessage, GenerateConfig, ModelOutput, ProviderResponse

log = logging.getLogger(__name__)

#: Defaults sized for a person waiting on a move: a hung server costs one timeout and one retry of it (about
#: two minutes), a failing one a few seconds of backoff; campaigns can raise them with ``-o``.
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
#: A server that did not answer within the timeout rarely does on the next try: timeouts are retried this often.
DEFAULT_TIMEOUT_RETRIES = 1
DEFAULT_BACKOFF_MAX = 10.0
MAX_RETRY_AFTER = 120.0
#: The most characters any reply may hold, whatever the provider. A model or server that ignores the token
#: limit (a scripted echo, a broken server) would otherwise feed ever longer replies into every later prompt
#: and every stored event, until memory or the store gives out. 100,000 characters is far above what any
#: protocol asks for (8,192 tokens are about 40,000 characters of English).
MAX_REPLY_CHARS = 100_000
#: With a token limit set, a reply may also hold at most this many characters per token: a real tokenizer's
#: tokens are a few characters long, so only a reply that ignored the limit reaches it.
MAX_CHARS_PER_TOKEN = 32

_FINAL_ERRORS: dict[str, type[ModelError]] = {
    "timeout": ModelTimeoutError,
    "connection": ServerUnreachableError,
    "http": ProviderHTTPError,
}


def _config_dict(cfg: GenerateConfig) -> dict[str, Any]:
    return cfg.model_dump(exclude_none=True, mode="json")


class Model:
    """Call a provider the way every caller should.

    ``config`` holds defaults for every call (temperature, max tokens, ...);
    per-call settings override them. ``cache`` is a :class:`~lexicoord.models.cache.Cache` (a local file, or a
    run's store) or ``None`` for no caching. ``budget``, when set, is drawn on by every attempt
    (:mod:`lexicoord.models.budget`).
    """

    def __init__(
        self,
        provider: Provider,
        *,
        config: GenerateConfig | None = None,
        cache: Cache | None = None,
        budget: Budget | None = None,
        timeout: float | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout_retries: int = DEFAULT_TIMEOUT_RETRIES,
        backoff_initial: float = 1.0,
        backoff_max: float = DEFAULT_BACKOFF_MAX,
        max_concurrency: int | None = None,
        max_reply_chars: int = MAX_REPLY_CHARS,
    ) -> None:
        self.provider = provider
        self.config = config or GenerateConfig()
        self.cache = cache
        self.budget = budget
        self.timeout = timeout or provider.default_timeout or DEFAULT_TIMEOUT
        self.max_retries = max_retries
        self.timeout_retries = timeout_retries
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.max_concurrency = max_concurrency or provider.default_concurrency
        if max_reply_chars < 1:
            raise ConfigError(f"max_reply_chars must be at least 1, not {max_reply_chars}.")
        self.max_reply_chars = int(max_reply_chars)

    @property
    def spec(self) -> str:
        return self.provider.spec

    def __repr__(self) -> str:
        return f"Model({self.spec!r})"

    async def generate(
        self,
        messages: str | Sequence[ChatMessage],
        config: GenerateConfig | None = None,
        **overrides: Any,
    ) -> ModelOutput:
        """One completion. Raises :class:`ModelError` only when retries are exhausted."""
        msgs = [ChatMessage(role="user", content=messages)] if isinstance(messages, str) else list(messages)
        cfg = self.config.merged(config, **overrides)
        schema = requested_schema(cfg)
        if schema is not None:
            check_schema(schema)
        agent = current_agent.get()
        start = time.perf_counter()
        key = cache_key(self.provider.cache_identity, msgs, cfg) if self.cache is not None else None
        cached = await self._cached(key)
        if cached is not None and cfg.logprobs is not None and not cached.top_logprobs:
            cached = None  # kept without the log-probabilities this call needs: ask the backend (it may give them now)
        if cached is not None:
            response, attempts = cached, 0
        else:
            try:
                await self.provider.prepare()
                start = time.perf_counter()  # loading the weights (the first call of an embedded model) is not the call's
                response, attempts = await self._with_retries(msgs, cfg)
                if cfg.logprobs is not None and not response.top_logprobs:
                    # Before the cache: a reply without them is never kept for a call that asks for them, so a
                    # server restarted with log-probabilities on is asked again, not answered from the cache.
                    raise self._no_logprobs(attempts)
            except Exception as exc:  # recorded whatever it is, then raised as it is
                report(
                    ModelCallRecord(
                        model=self.spec, agent=agent, messages=msgs, config=_config_dict(cfg),
                        error=str(exc) if isinstance(exc, LexicoordError) else f"{type(exc).__name__}: {exc}",
                        latency=time.perf_counter() - start, attempts=getattr(exc, "attempts", 0),
                    )
                )
                raise
            response = self._bounded(response, cfg)  # before the cache, which keeps only what callers get
            if self.cache is not None and key is not None:
                # A commit to the cache's file, off the event loop, which serves every other call meanwhile.
                await asyncio.to_thread(self.cache.put, key, self.spec, response)
        response = self._bounded(response, cfg)  # a reply cached before the bound (or under a larger one) too
        parsed, choice, parse_error = parse_reply(response.text, cfg)
        output = ModelOutput(
            model=response.model or self.spec,
            text=response.text,
            parsed=parsed,
            choice=choice,
            parse_error=parse_error,
            usage=response.usage,
            latency=time.perf_counter() - start,
            cached=cached is not None,
            attempts=attempts,
            finish_reason=response.finish_reason,
            top_logprobs=response.top_logprobs if cfg.logprobs is not None else None,  # only when asked, as documented
        )
        report(
            ModelCallRecord(
                model=self.spec, agent=agent, messages=msgs, config=_config_dict(cfg), text=output.text,
                parsed=parsed, parse_error=parse_error, usage=output.usage, finish_reason=output.finish_reason,
                latency=output.latency, cached=output.cached, attempts=attempts,
            )
        )
        return output

    async def _cached(self, key: str | None) -> ProviderResponse | None:
        """The cached reply for ``key``; a cache across the network (a run's store) is read off the event loop."""
        if self.cache is None or key is None:
            return None
        if self.cache.remote:
            return await asyncio.to_thread(self.cache.get, key)
        return self.cache.get(key)  # a local file: a read costs less than a thread hop

    def _no_logprobs(self, attempts: int) -> ModelError:
        """A call asked for log-probabilities and the backend gave none: one clear error, never an empty answer."""
        error = ModelError(f"{self.spec} gives no log-probabilities, which this call asks for (logprobs=...; a scorer "
                           "reads an option's probability from them); use a backend that returns them: the embedded "
                           "model (local/...), or an OpenAI-compatible server that supports logprobs.")
        error.attempts = attempts  # type: ignore[attr-defined]
        return error

    def reply_bound(self, cfg: GenerateConfig) -> int:
        """The most characters a reply to a call with ``cfg`` may hold (see :data:`MAX_REPLY_CHARS`)."""
        if cfg.max_tokens:
            return min(self.max_reply_chars, cfg.max_tokens * MAX_CHARS_PER_TOKEN)
        return self.max_reply_chars

    def _bounded(self, response: ProviderResponse, cfg: GenerateConfig) -> ProviderResponse:
        """A reply over the bound is cut there and marked as a backend marks a reply cut at its token limit
        (``finish_reason="length"``), so protocols count it as cut; the call's record keeps only the cut text."""
        bound = self.reply_bound(cfg)
        if len(response.text) <= bound:
            return response
        log.warning("%s: a reply of %d characters was cut to %d (the reply bound)", self.spec, len(response.text), bound)
        return response.model_copy(update={"text": response.text[:bound], "finish_reason": "length"})

    def _backoff(self, failures: int, exc: TransientError) -> float:
        """At least the server's ``Retry-After``, else exponential backoff; jitter on top of either
        so that agents throttled together do not retry together."""
        jitter = random.uniform(0, self.backoff_initial)
        if exc.retry_after is not None:
            return min(max(exc.retry_after, 0.0), MAX_RETRY_AFTER) + jitter
        return min(self.backoff_max, self.backoff_initial * 2.0 ** (failures - 1)) + jitter

    async def _attempt(self, msgs: list[ChatMessage], cfg: GenerateConfig, timeout: float) -> ProviderResponse:
        async with limiter(self.provider.limit_key, self.max_concurrency):
            if self.budget is not None:
                await self.budget.acquire()  # before the timeout starts: waiting on the budget is not the server's delay
            try:
                async with asyncio.timeout(timeout):
                    response = await self.provider.generate(msgs, cfg)
                if self.budget is not None:
                    await self.budget.spend(response.usage.total_tokens)
                return response
            except TimeoutError:
                message = f"{self.spec} did not answer within {timeout:g} s"
                if not self.provider.retry_timeouts:
                    raise ModelTimeoutError(f"{message}.") from None
                raise TransientError(message, kind="timeout") from None

    async def _with_retries(
        self, msgs: list[ChatMessage], cfg: GenerateConfig
    ) -> tuple[ProviderResponse, int]:
        # A plain loop rather than a retry library: this path runs on every call, and a
        # library's per-call machinery cost more than the model call in fast protocols.
        timeout = cfg.timeout or self.timeout
        retries = self.max_retries if cfg.max_retries is None else cfg.max_retries
        attempts = timeouts = 0
        while True:
            attempts += 1
            try:
                return await self._attempt(msgs, cfg, timeout), attempts
            except TransientError as exc:
                timeouts += exc.kind == "timeout"
                if attempts > retries or timeouts > self.timeout_retries:
                    error_type = _FINAL_ERRORS.get(exc.kind, ModelError)
                    noun = "attempt" if attempts == 1 else "attempts"
                    final = error_type(f"{exc.final_message.rstrip('.')} (gave up after {attempts} {noun}).")
                    final.attempts = attempts  # type: ignore[attr-defined]
                    raise final from None
                wait = self._backoff(attempts, exc)
                log.warning("%s: attempt %d failed (%s); retrying in %.1fs", self.spec, attempts, exc, wait)
                await asyncio.sleep(wait)
            except Exception as exc:
                exc.attempts = attempts  # type: ignore[attr-defined]
                raise
