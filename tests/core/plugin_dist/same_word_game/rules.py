"""The rules, and nothing else."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from lexicoord.core import Audience, EpisodeContext, MessageEvent, Protocol, Request
from lexicoord.prompting import fence

WORD = {"type": "object", "properties": {"word": {"type": "string", "minLength": 1, "maxLength": 30}},
        "required": ["word"], "additionalProperties": False}


class SameWordSettings(BaseModel):
    max_tokens: int = 20


class SameWordOutcome(BaseModel):
    agreed: bool
    words: dict[str, str | None]


class SameWord(Protocol[dict[str, Any], SameWordSettings, SameWordOutcome]):
    name = "same-word"
    settings_model = SameWordSettings
    outcome_model = SameWordOutcome

    async def play(self, ctx: EpisodeContext) -> SameWordOutcome:
        settings = self.settings_of(ctx)
        seats = [ctx.seat(spec) for spec in ctx.spec.lineup]
        request = Request(kind="name", view={"thing": ctx.item["thing"]}, schema=WORD, max_tokens=settings.max_tokens,
                          prompt=f"Name this in one word, as JSON {{\"word\": ...}}:\n{fence(ctx.item['thing'], 'THING')}")
        answers = await asyncio.gather(*(seat.answer(request) for seat in seats))
        words = {seat.name: a.value["word"].lower() if a.ok and a.value else None for seat, a in zip(seats, answers)}
        for name, word in words.items():
            ctx.emit(MessageEvent(agent=name, content=word or "", audience=Audience.only(name)))
        return SameWordOutcome(agreed=None not in words.values() and len(set(words.values())) == 1, words=words)
