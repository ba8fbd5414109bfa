"""The LexiCoord coordination game (Aruta et al., AAMAS 2026, section 2), and nothing else.

Agents a1..an, a1 the coalition leader; an ambiguous word in a sentence; a finite
set I of admissible interpretations.

- Round 0: the leader utters the sentence and publicly announces its interpretation,
  which is t1, the first disjunct: the option set is re-ordered for the game so that
  the announced meaning comes first (the original order is recorded).
- Round t >= 1: every agent chooses one interpretation in I with a brief justification,
  independently: all are asked before any answer of the round is shown to anyone.
- The round converges when all agents choose the same interpretation: the game ends
  converged, with clarification depth t - 1 (0 = the first round agreed).
- Otherwise a clarification instance follows: every agent sees every choice and
  justification of the rounds so far, the leader may add a clarifying statement,
  and all choose again.
- The game fails when the clarification bound is reached (default 3 clarification
  rounds, so at most 4 rounds) or when the leader ends it (``leader_ended``, also
  when the end is asked for during the last round). A person leading ends it by
  answering ``end`` to the clarification request; a model leader is offered the
  end in that request only with ``leader_may_end`` (off by default, so a model-led
  campaign is ended by the bound alone).
- Two named variants, both on by default as the paper plays: ``announce`` (round 0 happens; off, the leader
  says the sentence and announces nothing, so the first round's choices are made with no hint) and
  ``leader_chooses`` (the leader is also a player; off, the leader only speaks and clarifies, and agreement is
  among the other players). The agreement gate plays both off: the person who gave the instruction clarifies,
  the models choose.
- A player who has left the game (a person the leader let go, in a live room) is
  recorded with a failed move and no longer counts toward convergence. Agreement
  needs at least two players: a game left with fewer is ``abandoned``.

Every event of the game is public; each request's view is built from the events
its seat may see. A failed move (timeout, unparseable reply) is recorded with its
reason. With ``failed_moves="block"`` (the default) it prevents convergence in
that round, because the team did not visibly agree; with ``"ignore"`` the round
converges when every valid choice agrees and at least two players made one.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, Field

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import ChoiceEvent, Event, MessageEvent, RoundClosedEvent, event_type
from lexicoord.core.protocol import Protocol
from lexicoord.core.seat import Seat, SeatInfo
from lexicoord.errors import ConfigError
from lexicoord.prompting import Prompts
from lexicoord.protocols.coordination.items import CoordinationItem
from lexicoord.protocols.coordination.moves import (
    announce_request,
    choose_request,
    clarify_request,
    decision,
    ends_game,
)
from lexicoord.protocols.coordination.simulated import simulated_seat
from lexicoord.protocols.coordination.views import Decision, round_view

PROMPTS = Prompts("lexicoord.protocols.coordination")


@event_type
class DisjunctionEvent(Event):
    """The option set I as the game plays it: the leader's announced meaning first (t1), then the others in
    their original order. ``original`` keeps the order the item came with."""

    type: str = "disjunction"
    options: list[str]
    original: list[str]


@event_type
class ClarificationEvent(MessageEvent):
    """The leader's clarifying statement, shown to everyone before the next round."""

    type: str = "clarification"


class CoordinationSettings(BaseModel):
    clarification_bound: int = Field(default=3, ge=0, le=20)
    leader_clarifies: bool = True
    #: Offer a model leader the end of the game in its clarification request (a person always has it).
    leader_may_end: bool = False
    failed_moves: Literal["block", "ignore"] = "block"
    seat_timeout: float = Field(default=120.0, gt=0)
    #: Round 0: the leader announces its meaning (t1). Off: no announcement, the options keep their order.
    announce: bool = True
    #: The leader chooses in every round like any player. Off: the leader only clarifies (two players at least
    #: besides it).
    leader_chooses: bool = True


Reason = Literal["converged", "bound", "leader_ended", "abandoned"]


def announced_first(options: list[str], announced: str | None) -> list[str]:
    """t1 is the announced meaning (Aruta et al.: "an initial interpretation t1, the first disjunct"); the
    rest keep their order. A failed announcement leaves the order as it was."""
    if announced is None or announced not in options:
        return list(options)
    return [announced, *(o for o in options if o != announced)]


class CoordinationOutcome(BaseModel):
    """One game's result, as stored and as every statistic reads it."""

    converged: bool
    #: ``converged``; ``bound`` (the clarification bound was reached); ``leader_ended``; ``abandoned`` (fewer
    #: than two players were left to agree).
    reason: Reason
    interpretation: str | None = None
    #: Clarification depth: rounds - 1 of a converged game; ``None`` for a failed one.
    depth: int | None = None
    rounds: int
    announcement: str | None = None
    intended: str | None = None
    correct: bool | None = None
    #: Every seat in line-up order (the leader first): name, kind, role, simulated, model or policy.
    agents: list[SeatInfo] = Field(default_factory=list)
    failed_moves: int = 0
    #: I as played, t1 (the announced meaning) first; and the item's own order. Empty in games stored before
    #: the announcement was made t1.
    options: list[str] = Field(default_factory=list)
    original_options: list[str] = Field(default_factory=list)


def converged(decisions: dict[str, Decision], failed_moves: str) -> str | None:
    """The interpretation all agreed on, or ``None``."""
    chosen = [d.choice for d in decisions.values()]
    if len(chosen) < 2:
        return None
    if failed_moves == "ignore":
        chosen = [c for c in chosen if c is not None]
        if len(chosen) < 2:
            return None
    if None in chosen or len(set(chosen)) != 1:
        return None
    return chosen[0]


class CoordinationGame(Protocol[CoordinationItem, CoordinationSettings, CoordinationOutcome]):
    name = "coordination"
    item_model = CoordinationItem
    settings_model = CoordinationSettings
    outcome_model = CoordinationOutcome
    seat_kinds = {"simulated": simulated_seat}

    def _emit_choice(self, ctx: EpisodeContext[CoordinationItem], seat: Seat, move: Decision, round_: int, kind: str,
                     options: list[str]) -> None:
        ctx.emit(
            ChoiceEvent(
                agent=seat.name, round=round_, choice=move.choice, justification=move.justification,
                options=options, failure=move.failure, raw=move.raw,
                move=kind, agent_kind=seat.kind, simulated=seat.simulated,
            )
        )

    async def play(self, ctx: EpisodeContext[CoordinationItem]) -> CoordinationOutcome:
        settings = self.settings_of(ctx)
        if len(ctx.spec.lineup) < (2 if settings.leader_chooses else 3):
            raise ConfigError("The coordination game needs at least two players"
                              + ("." if settings.leader_chooses else " besides a leader who does not choose."))
        item = ctx.item
        seats = [ctx.seat(spec, system_prompt=PROMPTS.render("coord_system", agent=spec.name))
                 for spec in ctx.spec.lineup]
        leader = seats[0]
        players = seats if settings.leader_chooses else seats[1:]

        def view(seat: Seat, round_: int) -> Any:
            return round_view(item, leader.name, round_, ctx.visible_to(seat.name))

        ctx.recorder.round = 0
        ctx.recorder.phase = "announce"
        ctx.emit(MessageEvent(agent=leader.name, content=item.sentence))
        original = list(item.options)
        announcement = Decision(choice=None)
        if settings.announce:
            announcement = decision(await leader.answer(announce_request(view(leader, 0))))
            self._emit_choice(ctx, leader, announcement, 0, "announcement", original)
        item = item.model_copy(update={"options": announced_first(original, announcement.choice)})
        ctx.emit(DisjunctionEvent(agent=leader.name, options=item.options, original=original))

        rounds = 0
        reason: Reason = "bound"
        agreed: str | None = None
        failed = 0
        for round_ in range(1, settings.clarification_bound + 2):
            ctx.recorder.round = round_
            ctx.recorder.phase = "round"
            # Independence: every request is built before anyone moves this round.
            requests = [choose_request(view(s, round_), s.name) for s in players]
            moves = [decision(a) for a in await asyncio.gather(*(s.answer(r) for s, r in zip(players, requests)))]
            by_name = {s.name: d for s, d in zip(players, moves)}
            for seat, move in zip(players, moves):
                self._emit_choice(ctx, seat, move, round_, "choice", item.options)
            rounds, failed = round_, failed + sum(1 for d in moves if d.choice is None)
            counted = {s.name: by_name[s.name] for s in players if s.present}
            agreed = converged(counted, settings.failed_moves)
            ctx.emit(
                RoundClosedEvent(summary={"choices": {n: d.choice for n, d in by_name.items()}, "converged": agreed is not None})
            )
            if agreed is not None:
                reason = "converged"
                break
            if len(counted) < 2:
                reason = "abandoned"
                break
            # The leader may end the game at any point, the last round included.
            if await ctx.should_end():
                reason = "leader_ended"
                break
            if round_ - 1 >= settings.clarification_bound:
                break
            # A clarification instance: the leader may speak, or end the game.
            if not settings.leader_clarifies:
                continue
            ctx.recorder.phase = "clarify"
            request = clarify_request(view(leader, round_ + 1).model_copy(update={"round": round_}),
                                      may_end=settings.leader_may_end)
            answer = await leader.answer(request)
            if ends_game(answer) or await ctx.should_end():
                reason = "leader_ended"
                break
            if answer.ok and answer.value is not None:
                ctx.emit(ClarificationEvent(agent=leader.name, round=round_, content=answer.value["statement"]))
            elif answer.failure:
                failure = f"{answer.failure} (raw: {answer.raw[:300]!r})" if answer.raw else answer.failure
                ctx.emit(ClarificationEvent(agent=leader.name, round=round_, content="", failure=failure))

        intended = item.intended
        # ``correct`` is the task's own score, recorded for converged games only (a failed game has no meaning
        # to be right about; the report gives accuracy over converged games, and over all games with a failed
        # one counted wrong).
        return CoordinationOutcome(
            converged=agreed is not None, reason=reason, interpretation=agreed,
            depth=rounds - 1 if agreed is not None else None, rounds=rounds, announcement=announcement.choice,
            intended=intended, correct=(agreed == intended) if agreed is not None and intended else None,
            agents=[s.describe() for s in seats], failed_moves=failed, options=item.options,
            original_options=original,
        )
