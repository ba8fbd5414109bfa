"""The LexiCoord coordination game (Aruta et al., AAMAS 2026, section 2), and nothing else.

Agents a1..an, a1 the coalition leader; an ambiguous word in a sentence; a finite
set I of admissible interpretations.

- Round 0: the leader utters the sentence and publicly announces its interpretation.
- Round t >= 1: every agent chooses one interpretation in I with a brief justification,
  independently: all are asked before any answer of the round is shown to anyone.
- The round converges when all agents choose the same interpretation: the game ends
  converged, with clarification depth t - 1 (0 = the first round agreed).
- Otherwise a clarification instance follows: every agent sees every choice and
  justification of the rounds so far, the leader may add a clarifying statement,
  and all choose again.
- The game fails when the clarification bound is reached (default 3 clarification
  rounds, so at most 4 rounds) or when the leader ends it.
- A player who has left the game (a person the leader let go, in a live room) is
  recorded with a failed move and no longer counts toward convergence.

A failed move (timeout, unparseable reply) is recorded with its reason. With
``failed_moves="block"`` (the default) it prevents convergence in that round,
because the team did not visibly agree; with ``"ignore"`` the round converges
when every valid choice agrees and at least two players made one.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, Literal

from pydantic import BaseModel, Field

from lexicoord.agents.base import AgentSpec
from lexicoord.agents.human import HumanSeat
from lexicoord.agents.prompting import render_prompt
from lexicoord.errors import ConfigError
from lexicoord.protocols.base import EpisodeContext, Protocol
from lexicoord.protocols.coordination.players import (
    HumanPlayer,
    LLMPlayer,
    Player,
    SimulatedAgent,
    SimulatedPlayer,
)
from lexicoord.protocols.coordination.views import Decision, PastRound, RoundView
from lexicoord.runs.events import ChoiceEvent, MessageEvent, RoundClosedEvent, event_type


@event_type
class ClarificationEvent(MessageEvent):
    """The leader's clarifying statement, shown to everyone before the next round."""

    type: str = "clarification"


class CoordinationSettings(BaseModel):
    clarification_bound: int = Field(default=3, ge=0, le=20)
    leader_clarifies: bool = True
    failed_moves: Literal["block", "ignore"] = "block"
    seat_timeout: float = Field(default=120.0, gt=0)


class CoordinationGame(Protocol):
    name = "coordination"

    def __init__(self, seats: dict[str, HumanSeat] | None = None) -> None:
        #: Seats for people, by agent name; a front end binds each to a person.
        self.seats = seats or {}

    def make_player(self, spec: AgentSpec, ctx: EpisodeContext) -> Player:
        if spec.kind == "llm":
            return LLMPlayer(ctx.llm_agent(spec, system_prompt=_system_prompt(spec.name)))
        if spec.kind == "simulated":
            agent = SimulatedAgent(spec.name, spec.options.get("policy", "majority"), p=float(spec.options.get("p", 0.2)))
            return SimulatedPlayer(agent, random.Random(ctx.rng.random()), ctx.item.get("intended"))
        if spec.kind == "human":
            seat = self.seats.get(spec.name)
            if seat is None:
                settings = CoordinationSettings(**ctx.settings)
                seat = self.seats[spec.name] = HumanSeat(spec.name, timeout=settings.seat_timeout)
            return HumanPlayer(seat)
        raise ConfigError(f"The coordination game has no players of kind '{spec.kind}' (seat '{spec.name}').")

    @staticmethod
    def converged(decisions: dict[str, Decision], failed_moves: str) -> str | None:
        """The interpretation all agreed on, or ``None``."""
        chosen = [d.choice for d in decisions.values()]
        if failed_moves == "ignore":
            chosen = [c for c in chosen if c is not None]
            if len(chosen) < 2:
                return None
        if None in chosen or len(set(chosen)) != 1:
            return None
        return chosen[0]

    def _emit_choice(self, ctx: EpisodeContext, player: Player, decision: Decision, round_: int, kind: str) -> None:
        ctx.emit(
            ChoiceEvent(
                agent=player.name, round=round_, choice=decision.choice, justification=decision.justification,
                options=list(ctx.item["options"]), failure=decision.failure, raw=decision.raw,
                move=kind, agent_kind=player.kind, simulated=player.simulated,
            )
        )

    async def play(self, ctx: EpisodeContext) -> dict[str, Any]:
        settings = CoordinationSettings(**ctx.settings)
        if len(ctx.spec.lineup) < 2:
            raise ConfigError("The coordination game needs at least two agents.")
        item = ctx.item
        players = [self.make_player(spec, ctx) for spec in ctx.spec.lineup]
        leader = players[0]
        view = RoundView(sentence=item["sentence"], word=item["word"], options=list(item["options"]), round=0, leader=leader.name)

        ctx.recorder.round = 0
        ctx.emit(MessageEvent(agent=leader.name, content=item["sentence"]))
        announcement = await leader.announce(view)
        self._emit_choice(ctx, leader, announcement, 0, "announcement")

        history: list[PastRound] = []
        clarification: str | None = None
        outcome: dict[str, Any] = {"converged": False, "reason": "bound", "interpretation": None, "depth": None}
        for round_ in range(1, settings.clarification_bound + 2):
            ctx.recorder.round = round_
            view = view.model_copy(
                update={"round": round_, "announcement": announcement, "history": list(history), "clarification": clarification}
            )
            # Independence: every player gets the same view, built before anyone moves this round.
            decisions = await asyncio.gather(*(p.choose(view) for p in players))
            by_name = {p.name: d for p, d in zip(players, decisions)}
            for player, decision in zip(players, decisions):
                self._emit_choice(ctx, player, decision, round_, "choice")
            counted = {p.name: by_name[p.name] for p in players if p.present}
            agreed = self.converged(counted, settings.failed_moves)
            ctx.emit(
                RoundClosedEvent(summary={"choices": {n: d.choice for n, d in by_name.items()}, "converged": agreed is not None})
            )
            history.append(PastRound(round=round_, decisions=by_name, clarification=clarification))
            if agreed is not None:
                outcome = {"converged": True, "reason": "converged", "interpretation": agreed, "depth": round_ - 1}
                break
            if round_ - 1 >= settings.clarification_bound:
                break
            # A clarification instance: the leader may speak, or end the game.
            after = view.model_copy(update={"history": list(history)})
            if await leader.wants_to_end(after):
                outcome["reason"] = "leader_ended"
                break
            clarification = await leader.clarify(after) if settings.leader_clarifies else None
            if await leader.wants_to_end(after):
                outcome["reason"] = "leader_ended"
                break
            if clarification:
                ctx.emit(ClarificationEvent(agent=leader.name, round=round_, content=clarification))
            elif leader.last_failure:
                ctx.emit(ClarificationEvent(agent=leader.name, round=round_, content="", failure=leader.last_failure))

        intended = item.get("intended")
        return {
            **outcome,
            "rounds": len(history),
            "announcement": announcement.choice,
            "intended": intended,
            "correct": (outcome["interpretation"] == intended) if outcome["converged"] and intended else None,
            "agents": [p.describe() for p in players],
            "failed_moves": sum(1 for r in history for d in r.decisions.values() if d.choice is None),
        }


def _system_prompt(name: str) -> str:
    return render_prompt("coord_system", agent=name)
