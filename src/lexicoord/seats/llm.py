"""A seat filled by a model, with a private memory of its own conversation."""

from __future__ import annotations

from typing import Any

from lexicoord.core.seat import Answer, Request, Seat, SeatInfo
from lexicoord.errors import LexicoordError, blame
from lexicoord.models.model import Model
from lexicoord.models.observe import acting_as
from lexicoord.models.types import ChatMessage, GenerateConfig, ModelOutput


class LLMSeat(Seat):
    """Each model seat has its own model, settings and history; no seat sees another's history.

    It answers a :class:`Request` through structured output: the request's schema
    (or closed choices) is enforced where the backend can, an unparseable reply is
    asked again once with another seed, and a reply that still does not parse is a
    failed :class:`Answer` that keeps the raw text.
    """

    kind = "llm"

    def __init__(
        self,
        name: str,
        model: Model,
        *,
        system_prompt: str | None = None,
        config: GenerateConfig | None = None,
        role: str | None = None,
    ) -> None:
        super().__init__(name, role)
        self.model = model
        self.system_prompt = system_prompt
        self.config = config or GenerateConfig()
        self.history: list[ChatMessage] = []

    def describe(self) -> SeatInfo:
        return super().describe().model_copy(update={"model": self.model.spec})

    def messages_for(self, prompt: str) -> list[ChatMessage]:
        head = [ChatMessage(role="system", content=self.system_prompt)] if self.system_prompt else []
        return [*head, *self.history, ChatMessage(role="user", content=prompt)]

    async def ask(
        self, prompt: str, config: GenerateConfig | None = None, *, remember: bool = False, **overrides: Any
    ) -> ModelOutput:
        return await self._ask(prompt, self.config.merged(config), remember=remember, **overrides)

    async def _ask(self, prompt: str, config: GenerateConfig, *, remember: bool = False, **overrides: Any) -> ModelOutput:
        """:meth:`ask` with the seat's settings already laid under ``config``."""
        with acting_as(self.name):
            output = await self.model.generate(self.messages_for(prompt), config, **overrides)
        if remember:
            self.history += [ChatMessage(role="user", content=prompt), ChatMessage(role="assistant", content=output.text)]
        return output

    async def ask_structured(
        self,
        prompt: str,
        config: GenerateConfig,
        *,
        parse_retries: int = 1,
        remember: bool = False,
    ) -> ModelOutput:
        """Ask for JSON or a choice; on an unparseable reply ask again with another seed.

        The last output is returned either way: the caller records its raw text
        and ``parse_error`` if it is still not usable. Every attempt is logged.
        """
        merged = self.config.merged(config)
        output = await self._ask(prompt, merged)
        for retry in range(parse_retries):
            if output.ok:
                break
            seed = (merged.seed or 0) + 1000 * (retry + 1)
            output = await self._ask(prompt, merged, seed=seed)
        if remember:
            self.history += [ChatMessage(role="user", content=prompt), ChatMessage(role="assistant", content=output.text)]
        return output

    async def replayed(self, request: Request, answer: Answer) -> None:
        if request.remember:  # the exchange joins the conversation as if it had just happened
            self.history += [ChatMessage(role="user", content=request.prompt),
                             ChatMessage(role="assistant", content=answer.raw or "")]

    async def answer(self, request: Request) -> Answer:
        # A temperature set on the seat (--agent ... options) wins over the request's.
        temperature = None if self.config.temperature is not None else request.temperature
        if request.logprobs is not None:
            return await self._scores(request, temperature)
        config = GenerateConfig(json_schema=request.answer_schema, choices=request.choices,
                                max_tokens=request.max_tokens, temperature=temperature, seed=request.seed)
        try:
            out = await self.ask_structured(request.prompt, config, remember=request.remember)
        except LexicoordError as exc:  # no reply at all (unreachable, 5xx, timeouts after retries): not a move
            blame(exc, self.name)
            raise
        tokens = out.usage.completion_tokens
        cut = out.finish_reason == "length"
        if not out.ok:
            return Answer(failure=out.parse_error or "unparseable reply", raw=out.text, tokens=tokens, truncated=cut)
        if request.choices is not None:
            value = {"choice": out.choice}
        elif request.answer_schema is None:
            value = {"text": out.text}
        else:
            value = out.parsed
        return Answer(value=value, raw=out.text, tokens=tokens, truncated=cut)

    async def _scores(self, request: Request, temperature: float | None) -> Answer:
        """The first token's top log-probabilities (no schema: the distribution is the answer)."""
        config = GenerateConfig(max_tokens=request.max_tokens or 1, temperature=temperature, logprobs=request.logprobs)
        try:
            out = await self.ask(request.prompt, config)
        except LexicoordError as exc:
            blame(exc, self.name)
            raise
        return Answer(value={"text": out.text, "logprobs": out.top_logprobs or {}}, raw=out.text,
                      tokens=out.usage.completion_tokens)
