"""``coalition``: LexiCoord's game (seed 000) as a gate, with the person as the leader who clarifies.

The game is played with its two named variants off (``announce``, ``leader_chooses``): the players choose a
reading independently with no hint, and the person who gave the instruction is the leader, asked only when a
round diverges. Convergence in the first round is ``clear``; otherwise the person's answer is the leader's
clarification and the players choose again, up to the clarification bound; no convergence then is ``refuse``.
"""

from __future__ import annotations

from collections import Counter

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import ChoiceEvent
from lexicoord.core.seat import Answer, Request, Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.gate.deliberation import DIVERGED_QUESTION, Declined, Deliberation, Nested
from lexicoord.gate.verdict import Decision, SeatStance
from lexicoord.protocols.coordination.moves import MAX_STATEMENT
from lexicoord.protocols.coordination.rules import CoordinationGame


class Clarifier(Seat):
    """The game's leader seat, answered by the person: a diverged round becomes the gate's question, and the
    person's answer the leader's clarifying statement (a refusal ends the game)."""

    kind = "human"

    def __init__(self, d: Deliberation, models: dict[str, str | None]) -> None:
        super().__init__(d.person_spec.name, "leader")
        self.simulated = d.person_spec.kind == "simulated"
        self.kind = "simulated" if self.simulated else "human"
        self.d, self.models = d, models

    async def answer(self, request: Request) -> Answer:
        history = request.view.get("history") or []
        last = history[-1]["decisions"] if history else {}
        seats = [SeatStance(name=n, kind="model", model=self.models.get(n), stance="choose" if m["choice"] else "failed",
                            choice=m["choice"], rounds=len(history)) for n, m in last.items()]
        chosen = [c for c, _ in Counter(m["choice"] for m in last.values() if m["choice"]).most_common()]
        options = chosen + [o for o in request.view.get("options", []) if o not in chosen]
        try:
            said = await self.d.ask(DIVERGED_QUESTION, options, "divergent", seats)
        except Declined:
            return Answer(action="end")
        statement = " ".join(p for p in (f"The person means: {said.choice}." if said.choice else "", said.text or "") if p)
        if len(statement) > MAX_STATEMENT:  # the game's limit on a clarification: never cut the person's words short
            statement = f"The person means: {said.choice}."  # the choice decides; the words stay in the record
        return Answer(value={"statement": statement}, raw=statement)


def _last_choices(ctx: EpisodeContext, names: set[str]) -> tuple[list[SeatStance], dict[str, str | None]]:
    """Each player's last move and the number of rounds it played, from the game's events."""
    last: dict[str, ChoiceEvent] = {}
    rounds: Counter[str] = Counter()
    for e in ctx.recorder.events:
        if isinstance(e, ChoiceEvent) and e.agent in names:
            last[e.agent] = e
            rounds[e.agent] += 1
    return [SeatStance(name=n, kind="model", stance="choose" if e.choice else "failed", choice=e.choice,
                       rounds=rounds[n]) for n, e in last.items()], {n: e.choice for n, e in last.items()}


async def decide(d: Deliberation) -> Decision:
    options = await d.readings()
    players = d.seats("player")
    item = {"sentence": f"{d.context}\n{d.instruction}".strip(), "word": d.instruction, "options": options}
    settings = {"clarification_bound": d.settings.clarifications, "announce": False, "leader_chooses": False,
                "failed_moves": "block", "seat_timeout": d.settings.person_timeout}
    person = d.person_spec
    lineup = [person.model_copy(update={"role": "leader"}), *players]
    models = {s.name: s.model for s in players}
    clarifier = Clarifier(d, models)

    def seat(spec: AgentSpec, ctx: EpisodeContext, system_prompt: str | None) -> Seat:
        return clarifier if spec.name == person.name else d.ctx.make_seat(spec, ctx, system_prompt)

    ctx = d.nested(Nested(item=item, settings=settings, lineup=lineup), make_seat=seat)
    clarifier.models = {s.name: s.model for s in ctx.spec.lineup}
    game = CoordinationGame()
    out = await game.play(game.start(ctx))
    seats, _ = _last_choices(ctx, {s.name for s in ctx.spec.lineup[1:]})
    seats = [s.model_copy(update={"model": clarifier.models.get(s.name)}) for s in seats]
    common = {"policy": "coalition", "options": options, "seats": seats, "clarifications": d.clarifications}
    picked = [c.choice for c in d.clarifications if c.choice]
    if out.converged and picked and out.interpretation != picked[-1]:  # the person said which; the team may not overrule
        return Decision(status="refuse", ambiguity="unresolved", **common,
                        reason=f"the players agreed on '{out.interpretation}', not on the person's '{picked[-1]}'")
    if out.converged:
        return Decision(status="clear", interpretation=out.interpretation, **common)
    if out.reason == "leader_ended":
        return Decision(status="refuse", reason="the person declined to clarify", ambiguity="divergent", **common)
    if seats and all(s.choice is None for s in seats):
        return Decision(status="error", reason="no player gave a readable choice in the last round", **common)
    return Decision(status="refuse", ambiguity="unresolved",
                    reason=f"the players did not converge after {len(d.clarifications)} clarification(s)", **common)
