"""A tiny protocol for runner tests: every seat answers once; items can ask to fail."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from lexicoord.core import EpisodeContext, Protocol, Request
from lexicoord.core.events import MessageEvent
from lexicoord.core.spec import AgentSpec


class ToyOutcome(BaseModel):
    texts: list[str]


class Toy(Protocol):
    name = "toy"
    outcome_model = ToyOutcome

    async def play(self, ctx: EpisodeContext) -> ToyOutcome:
        if ctx.item.get("fail"):
            raise RuntimeError(f"item {ctx.spec.item_id} is set to fail")
        seats = [ctx.seat(s) for s in ctx.spec.lineup]
        ctx.recorder.round = 1
        request = Request(kind="say", prompt=f"item {ctx.spec.item_id}")
        answers = await asyncio.gather(*(s.answer(request) for s in seats))
        texts = [a.value["text"] if a.value else "" for a in answers]
        for seat, text in zip(seats, texts):
            ctx.emit(MessageEvent(agent=seat.name, content=text))
        return ToyOutcome(texts=texts)


def lineup(model: str = "scripted/echo", n: int = 2) -> list[AgentSpec]:
    return [AgentSpec(name=f"a{i}", model=model) for i in range(n)]
