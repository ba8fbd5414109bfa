"""A gate's check as a protocol: one episode per check, so the store, the viewer and reports read it.

The item is the check (instruction, context, candidates); the settings are the gate's configuration; the
line-up the models the policy may seat and the person. The outcome is the policy's :class:`Decision`. What
cannot decide is never ``clear``: a deadline passed is ``error``, a model that cannot be reached or a reply that
cannot be read is ``error``, a person who does not answer or declines is ``refuse``, each with its reason.
"""

from __future__ import annotations

import asyncio

from lexicoord.core.context import EpisodeContext
from lexicoord.core.protocol import Protocol
from lexicoord.errors import LexicoordError
from lexicoord.gate.deliberation import Declined, Deliberation, Unanswered
from lexicoord.gate.evaluation.judge import judge_questions
from lexicoord.gate.evaluation.person import simulated_person
from lexicoord.gate.items import GateItem
from lexicoord.gate.policies import policy
from lexicoord.gate.settings import GateSettings
from lexicoord.gate.verdict import Decision


class GateCheck(Protocol[GateItem, GateSettings, Decision]):
    name = "gate"
    item_model = GateItem
    settings_model = GateSettings
    outcome_model = Decision
    #: A check may wait on a person for minutes: every answer is journaled, so a restart goes on from it.
    journal = True
    #: An evaluation's person answers from the item's gold fields (``lexicoord gate eval``).
    seat_kinds = {"simulated": simulated_person}

    async def play(self, ctx: EpisodeContext[GateItem]) -> Decision:
        decision = await self.decide(ctx)
        gold = ctx.item.gold
        if gold is not None and decision.clarifications:  # an evaluation: a judge model, if any, reads the questions
            await judge_questions(ctx, [c.question for c in decision.clarifications], gold.get("element") or [])
        return decision

    async def decide(self, ctx: EpisodeContext[GateItem]) -> Decision:
        settings = self.settings_of(ctx)
        limit = ctx.item.timeout or settings.timeout
        settings = settings.model_copy(update={"timeout": limit})
        d = Deliberation(ctx=ctx, settings=settings)
        try:
            async with asyncio.timeout(limit) as deadline:
                d.deadline = deadline
                return await policy(settings.policy)(d)
        except TimeoutError:
            if d.deadline is None or not d.deadline.expired():
                raise
            return self._ended(d, "error", f"no verdict within {limit:g} s")
        except Declined as exc:
            return self._ended(d, "refuse", str(exc))
        except Unanswered as exc:
            return self._ended(d, "refuse", f"the person did not answer: {exc}")
        except LexicoordError as exc:
            return self._ended(d, "error", str(exc))

    @staticmethod
    def _ended(d: Deliberation, status: str, reason: str) -> Decision:
        return Decision.model_validate({"status": status, "reason": reason, "policy": d.settings.policy,
                                        "options": d.candidates, "clarifications": d.clarifications,
                                        "ambiguity": "unresolved" if status == "refuse" else "none"})
