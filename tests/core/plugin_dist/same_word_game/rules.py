"""The rules, and nothing else: every seat names the thing in one word, unseen by the others; all alike wins."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.core import Audience, EpisodeContext, Event, Protocol, Request, event_type
from lexicoord.prompting import fence

WORD = {"type": "object", "properties": {"word": {"type": "string", "minLength": 1, "maxLength": 30}},
        "required": ["word"], "additionalProperties": False}


def prompt_of(thing: str) -> str:
    return f"Name this in one word, as JSON {{\"word\": ...}}:\n{fence(thing, 'THING')}"


class Thing(BaseModel):
    """An item: what the seats name. The task loads files with it and the rules read it, ``ctx.item.thing``;
    a file's other columns are ignored (a line without ``thing`` fails its own episode, the field named)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=80)
    thing: str = Field(min_length=1, max_length=200)


class SameWordSettings(BaseModel):
    max_tokens: int = Field(default=20, ge=4, le=200)


class SameWordOutcome(BaseModel):
    agreed: bool
    words: dict[str, str | None]


@event_type
class Named(Event):
    """One seat's word (``None``: no valid word), for its author alone while the game is played."""

    type: str = "same_word_named"
    word: str | None

    def line(self) -> str:
        return f'names it "{self.word}"' if self.word else "names no valid word"


@event_type
class Revealed(Event):
    """Every seat's word, shown to everyone once all have named the thing."""

    type: str = "same_word_revealed"
    words: dict[str, str | None]
    agreed: bool

    def line(self) -> str:
        said = ", ".join(f"{name}: {word or '-'}" for name, word in self.words.items())
        return f"{'agreed' if self.agreed else 'did not agree'} ({said})"


class SameWord(Protocol[Thing, SameWordSettings, SameWordOutcome]):
    name = "same-word"
    item_model = Thing
    settings_model = SameWordSettings
    outcome_model = SameWordOutcome

    async def play(self, ctx: EpisodeContext[Thing]) -> SameWordOutcome:
        settings = self.settings_of(ctx)
        seats = [ctx.seat(spec) for spec in ctx.spec.lineup]
        thing = ctx.item.thing
        request = Request(kind="name", view={"thing": thing}, schema=WORD, max_tokens=settings.max_tokens,
                          prompt=prompt_of(thing))
        answers = await asyncio.gather(*(seat.answer(request) for seat in seats))
        words = {seat.name: a.value["word"].lower() if a.ok and a.value else None for seat, a in zip(seats, answers)}
        for name, word in words.items():
            ctx.emit(Named(agent=name, word=word, audience=Audience.only(name)))
        agreed = None not in words.values() and len(set(words.values())) == 1
        ctx.emit(Revealed(words=words, agreed=agreed))
        return SameWordOutcome(agreed=agreed, words=words)
