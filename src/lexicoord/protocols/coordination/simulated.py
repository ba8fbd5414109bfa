"""Simulated people for campaigns: each answers the game's requests by a stated policy.

They stand in for people, so every record and report marks them ``simulated``.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Literal

from lexicoord.core.context import EpisodeContext
from lexicoord.core.seat import Answer, Request, Seat, SeatInfo
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination.items import CoordinationItem
from lexicoord.protocols.coordination.views import RoundView

Policy = Literal["first", "intended", "follow-leader", "majority", "stubborn", "noisy", "random"]
POLICIES: dict[str, str] = {
    "first": "always the first listed meaning (a fixed default reading)",
    "intended": "the meaning the sentence settles when known, else the first (an attentive reader)",
    "follow-leader": "the leader's announced meaning",
    "majority": "the leader's announcement first, then the previous round's most common choice",
    "stubborn": "a random meaning in round 1, kept to the end",
    "noisy": "like majority, but with probability p a random meaning",
    "random": "a random meaning every round",
}


class SimulatedSeat(Seat):
    kind = "simulated"
    simulated = True

    def __init__(self, name: str, policy: str, rng: random.Random, *, p: float = 0.2,
                 intended: str | None = None, role: str | None = None) -> None:
        if policy not in POLICIES:
            raise LexicoordError(f"Unknown simulated-human policy '{policy}'; known: {', '.join(POLICIES)}.")
        super().__init__(name, role)
        self.policy = policy
        self.p = p
        self.rng = rng
        self.intended = intended
        self._kept: str | None = None

    def describe(self) -> SeatInfo:
        return SeatInfo(**super().describe().model_dump(), policy=self.policy, p=self.p)

    def pick(self, view: RoundView) -> str:
        policy = self.policy
        announced = view.announcement.choice if view.announcement else None
        if policy == "first":
            return view.options[0]
        if policy == "intended":
            return self.intended or view.options[0]
        if policy == "follow-leader":
            return announced or view.options[0]
        if policy == "random":
            return self.rng.choice(view.options)
        if policy == "stubborn":
            self._kept = self._kept or self.rng.choice(view.options)
            return self._kept
        if policy == "noisy" and self.rng.random() < self.p:
            return self.rng.choice(view.options)
        # majority (and noisy otherwise)
        if view.history:
            counts = Counter(d.choice for d in view.history[-1].decisions.values() if d.choice)
            if counts:
                top = max(counts.values())
                leading = [c for c in view.options if counts.get(c) == top]
                return announced if announced in leading else leading[0]
        return announced or view.options[0]

    async def replayed(self, request: Request, answer: Answer) -> None:
        await self.answer(request)  # the same draws from the policy's stream, so later moves stay the same

    async def answer(self, request: Request) -> Answer:
        view = RoundView.model_validate(request.view)
        if request.kind == "clarify":
            announced = view.announcement.choice if view.announcement else None
            return Answer(value={"statement": f'By "{view.word}" I mean {announced}.'}) if announced \
                else Answer(action="pass")
        return Answer(value={"choice": self.pick(view), "justification": f"simulated ({self.policy})"})


def simulated_seat(spec: AgentSpec, ctx: EpisodeContext[CoordinationItem], system_prompt: str | None = None) -> SimulatedSeat:
    """A line-up's ``sim:POLICY[:p]`` seat, with its own random stream drawn from the episode's."""
    return SimulatedSeat(spec.name, spec.options.get("policy", "majority"), random.Random(ctx.rng.random()),
                         p=float(spec.options.get("p", 0.2)), intended=ctx.item.intended, role=spec.role)
