"""``single``: the debate paper's single-agent baseline as a gate (one model call per pass).

Clear when the agent says clear. Otherwise its one question goes to the person; with the answer in the scene
the agent looks again, up to the clarification bound; still unclear then is ``refuse``.
"""

from __future__ import annotations

from lexicoord.gate.deliberation import Deliberation, Nested
from lexicoord.gate.verdict import Decision, SeatStance
from lexicoord.protocols.debate.single import SingleAgent


async def decide(d: Deliberation) -> Decision:
    spec = d.seats("agent")[0]
    question = ""
    seats: list[SeatStance] = []
    for asked in range(d.settings.clarifications + 1):
        ctx = d.nested(Nested(item={"context": d.scene(), "instruction": d.instruction},
                              settings={"condition": "single", "sentences": d.settings.sentences}, lineup=[spec]))
        study = SingleAgent()
        out = await study.play(study.start(ctx))
        seats = [SeatStance(name=ctx.spec.lineup[0].name, kind="model", model=spec.model,
                            stance=out.verdict or "failed")]
        if out.termination == "error":
            return Decision(status="error", policy="single", seats=seats,
                            reason=f"{seats[0].name} gave no readable verdict: {out.error}")
        if out.verdict == "clear":
            return Decision(status="clear", policy="single", interpretation=d.reading(), seats=seats,
                            options=d.candidates, clarifications=d.clarifications)
        question = out.question
        if asked == d.settings.clarifications:
            break
        await d.ask(question, d.candidates, "underspecified", seats)
    return Decision(status="refuse", policy="single", question=question or None, ambiguity="unresolved", seats=seats,
                    reason=f"still unclear after {len(d.clarifications)} clarification(s)",
                    options=d.candidates, clarifications=d.clarifications)
