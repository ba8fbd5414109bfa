"""``debate``: the leader-follower debate (seed 001) as a gate; its consensus is the verdict.

Consensus that the instruction is clear is ``clear``. Consensus on a question, or no consensus with a
question on the table (the leader's, else a follower's alternative), puts that question to the person; with
the answer in the scene the team debates again, up to the clarification bound. No consensus and no question,
or still unclear at the bound, is ``refuse``; an unreadable reply is ``error``.
"""

from __future__ import annotations

from lexicoord.gate.deliberation import Deliberation, Nested
from lexicoord.gate.verdict import Decision, SeatStance
from lexicoord.protocols.debate.common import DebateOutcome
from lexicoord.protocols.debate.rules import LeaderFollowerDebate


def stances(out: DebateOutcome, models: dict[str, str | None]) -> list[SeatStance]:
    leader = out.leader or ""
    seats = [SeatStance(name=leader, kind="model", model=models.get(leader), stance=out.verdict or "failed",
                        rounds=out.rounds)]
    seats += [SeatStance(name=f.agent, kind="model", model=models.get(f.agent), stance=f.stance or "failed",
                         rounds=out.rounds) for f in out.final_feedback]
    return seats


async def decide(d: Deliberation) -> Decision:
    specs = d.seats("leader") + d.seats("follower")
    question = ""
    seats: list[SeatStance] = []
    for asked in range(d.settings.clarifications + 1):
        ctx = d.nested(Nested(item={"context": d.scene(), "instruction": d.instruction},
                              settings={"condition": "debate", "rounds": d.settings.rounds,
                                        "sentences": d.settings.sentences}, lineup=specs))
        study = LeaderFollowerDebate()
        out = await study.play(study.start(ctx))
        seats = stances(out, {s.name: s.model for s in ctx.spec.lineup})
        if out.termination == "error":
            return Decision(status="error", policy="debate", seats=seats,
                            reason=f"the debate ended on an unreadable reply: {out.error}")
        if out.consensus and out.verdict == "clear":
            return Decision(status="clear", policy="debate", interpretation=d.reading(), seats=seats,
                            options=d.candidates, clarifications=d.clarifications)
        question = out.question or next((f.alternative for f in out.final_feedback if f.alternative), "")
        if asked == d.settings.clarifications or not question:
            break
        await d.ask(question, d.candidates, "underspecified" if out.consensus else "divergent", seats)
    reason = (f"still unclear after {len(d.clarifications)} clarification(s)" if question
              else f"no consensus after {d.settings.rounds} round(s) and no question to ask")
    return Decision(status="refuse", policy="debate", question=question or None, ambiguity="unresolved", seats=seats,
                    reason=reason, options=d.candidates, clarifications=d.clarifications)
