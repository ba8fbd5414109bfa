"""The single-agent baseline (Davila et al., section 3.3.1), and nothing else.

One agent reads the scene and the instruction, reasons within the sentence
limit, and ends with a verdict: the instruction is clear, or here is the one
best clarifying question. One call; its latency is recorded.
"""

from __future__ import annotations

import time

from lexicoord.core.context import EpisodeContext
from lexicoord.core.protocol import Protocol
from lexicoord.errors import ConfigError
from lexicoord.prompting import Prompts
from lexicoord.protocols.debate.common import DebateOutcome, DebateSettings, head, judge, scene, seat
from lexicoord.protocols.debate.items import DebateItem
from lexicoord.protocols.debate.replies import ask_proposal, proposal_event, proposal_request

PROMPTS = Prompts("lexicoord.protocols.debate")


class SingleAgent(Protocol[DebateItem, DebateSettings, DebateOutcome]):
    name = "debate-single"
    item_model = DebateItem
    settings_model = DebateSettings
    outcome_model = DebateOutcome

    async def play(self, ctx: EpisodeContext[DebateItem]) -> DebateOutcome:
        settings = self.settings_of(ctx)
        if len(ctx.spec.lineup) != 1:
            raise ConfigError("The single-agent baseline takes exactly one agent.")
        spec = ctx.spec.lineup[0]
        solo = seat(ctx, spec)
        ctx.recorder.round = 1
        ctx.recorder.phase = "propose"
        prompt = PROMPTS.render("debate_single", head=head(ctx.item), sentences=str(settings.sentences))
        request = proposal_request(prompt, {**scene(ctx.item), "role": "single", "sentences": settings.sentences},
                                   settings, 1)
        started = time.perf_counter()
        proposal = await ask_proposal(solo, request)
        latency = time.perf_counter() - started
        ctx.emit(proposal_event(solo.name, 1, proposal, role="single"))
        return DebateOutcome(
            condition="single", model=spec.model, agent=solo.name,
            termination="answered" if proposal.ok else "error", error=proposal.failure,
            verdict=proposal.verdict, question=proposal.question, reasoning=proposal.reasoning,
            rounds=1, latency=round(latency, 4),
            judge=await judge(ctx, settings, proposal.question) if proposal.ok else None,
        )
