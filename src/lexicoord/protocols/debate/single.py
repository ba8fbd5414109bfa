"""The single-agent baseline (Davila et al., section 3.3.1), and nothing else.

One agent reads the scene and the instruction, reasons within the sentence
limit, and ends with a verdict: the instruction is clear, or here is the one
best clarifying question. One call; its latency is recorded.
"""

from __future__ import annotations

import time
from typing import Any

from lexicoord.agents.prompting import render_prompt
from lexicoord.errors import ConfigError
from lexicoord.protocols.base import EpisodeContext, Protocol
from lexicoord.protocols.debate.common import DebateSettings, agent, head, judge
from lexicoord.protocols.debate.replies import ask_proposal, proposal_event


class SingleAgent(Protocol):
    name = "ambiguity-single"

    async def play(self, ctx: EpisodeContext) -> dict[str, Any]:
        settings = DebateSettings(**ctx.settings)
        if len(ctx.spec.lineup) != 1:
            raise ConfigError("The single-agent baseline takes exactly one agent.")
        spec = ctx.spec.lineup[0]
        solo = agent(ctx, spec)
        ctx.recorder.round = 1
        prompt = render_prompt("debate_single", head=head(ctx.item), sentences=str(settings.sentences))
        started = time.perf_counter()
        proposal = await ask_proposal(solo, prompt, settings)
        latency = time.perf_counter() - started
        ctx.emit(proposal_event(solo.name, 1, proposal, role="single"))
        return {
            "condition": "single", "model": spec.model, "agent": solo.name,
            "termination": "answered" if proposal.ok else "error", "error": proposal.failure,
            "verdict": proposal.verdict, "question": proposal.question, "reasoning": proposal.reasoning,
            "rounds": 1, "latency": round(latency, 4),
            "judge": await judge(ctx, settings, proposal.question) if proposal.ok else None,
        }
