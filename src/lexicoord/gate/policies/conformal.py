"""``conformal``: KnowNo's prediction set as a gate (one model call when the caller gives the options).

One option in the set is ``clear`` with that option. Several (or none) put "which of these?" to the person:
an option they pick is the reading (the person is the authority, as in KnowNo's help); a free answer is
added to the scene and the options are scored again, up to the clarification bound; then ``refuse``.
"""

from __future__ import annotations

from lexicoord.gate.conformal import prediction_set, probabilities
from lexicoord.gate.deliberation import PROMPTS, SET_QUESTION, Deliberation
from lexicoord.gate.events import ScoresEvent
from lexicoord.gate.verdict import ConformalSet, Decision, SeatStance


async def decide(d: Deliberation) -> Decision:
    assert d.settings.qhat is not None  # settings are checked before a gate starts
    options = await d.readings()
    spec = d.seats("scorer")[0]
    scorer = d.ctx.seat(spec, system_prompt=PROMPTS.render("gate_system"))
    found = ConformalSet(probabilities={}, qhat=d.settings.qhat, kept=[])
    seats: list[SeatStance] = []
    for asked in range(d.settings.clarifications + 1):
        scores = await probabilities(scorer, d.scene(), d.instruction, options)
        probs = scores.probabilities
        kept = prediction_set(probs, d.settings.qhat)
        found = ConformalSet(probabilities={o: round(p, 6) for o, p in probs.items()}, qhat=d.settings.qhat, kept=kept,
                             letter_mass=round(scores.mass, 6))
        d.ctx.emit(ScoresEvent(agent=spec.name, probabilities=found.probabilities, qhat=found.qhat, kept=kept,
                               letter_mass=found.letter_mass))
        if scores.mass < d.settings.min_letter_mass:  # the model mostly said something else: no score to trust
            return Decision(status="error", policy="conformal", options=options, conformal=found,
                            clarifications=d.clarifications,
                            reason=f"the option letters held {scores.mass:.0%} of the scorer's first token "
                                   f"(below {d.settings.min_letter_mass:.0%}), so its scores cannot be trusted")
        best = max(probs, key=lambda o: probs[o])
        seats = [SeatStance(name=spec.name, kind="model", model=spec.model, stance="choose", choice=best,
                            rounds=asked + 1)]
        if len(kept) == 1:
            return Decision(status="clear", policy="conformal", interpretation=kept[0], options=options, seats=seats,
                            conformal=found, clarifications=d.clarifications)
        if asked == d.settings.clarifications:
            break
        said = await d.ask(SET_QUESTION, kept or options, "divergent", seats)
        if said.choice:
            person = SeatStance(name=d.person_spec.name, kind=d.person_kind, stance="answer", choice=said.choice)
            return Decision(status="clear", policy="conformal", interpretation=said.choice, options=options,
                            seats=[*seats, person], conformal=found, clarifications=d.clarifications)
    return Decision(status="refuse", policy="conformal", ambiguity="unresolved", options=options, seats=seats,
                    conformal=found, clarifications=d.clarifications,
                    reason=f"{len(found.kept)} options stayed in the prediction set after "
                           f"{len(d.clarifications)} clarification(s)")
