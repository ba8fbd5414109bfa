"""The demo: each agent independently picks a meaning for the ambiguous word and says why.

One round, no clarification; the outcome says whether all agents agreed. It
shows the whole platform (models, agents, events, store) on one built-in
sentence and is replaced by the coordination game when that lands.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lexicoord.agents.base import AgentSpec
from lexicoord.agents.llm import LLMAgent
from lexicoord.agents.prompting import fence, render_prompt
from lexicoord.models.types import GenerateConfig
from lexicoord.protocols.base import EpisodeContext, Protocol
from lexicoord.runs.events import ChoiceEvent, RoundClosedEvent

DEMO_ITEM: dict[str, Any] = {
    "id": "demo-bank",
    "sentence": "Meet me at the bank before it closes; I'll be the one by the water.",
    "word": "bank",
    "options": ["a financial institution", "the land alongside a river"],
}


def choice_schema(options: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": options},
            "justification": {"type": "string", "minLength": 1, "maxLength": 300},
        },
        "required": ["choice", "justification"],
        "additionalProperties": False,
    }


class DemoChoice(Protocol):
    name = "demo-choice"

    async def _choose(self, agent: LLMAgent, ctx: EpisodeContext) -> ChoiceEvent:
        item = ctx.item
        options = list(item["options"])
        prompt = render_prompt(
            "demo_choose",
            sentence=fence(item["sentence"], "SENTENCE"),
            word=item["word"],
            options="\n".join(f"- {o}" for o in options),
        )
        config = GenerateConfig(json_schema=choice_schema(options), max_tokens=120)
        out = await agent.ask_structured(prompt, config)
        if out.ok:
            return ChoiceEvent(
                agent=agent.name, choice=out.parsed["choice"], justification=out.parsed["justification"],
                options=options, raw=out.text,
            )
        return ChoiceEvent(agent=agent.name, choice=None, options=options, failure=out.parse_error, raw=out.text)

    async def play(self, ctx: EpisodeContext) -> dict[str, Any]:
        agents = []
        for spec in ctx.spec.lineup:
            agent = ctx.llm_agent(spec, render_prompt("demo_choose_system", agent=spec.name))
            agents.append(agent)
        ctx.recorder.round = 1
        # Independent choices: every agent is asked before any answer is shown to anyone.
        choices = await asyncio.gather(*(self._choose(a, ctx) for a in agents))
        for event in choices:
            ctx.emit(event)
        picked = {c.agent: c.choice for c in choices}
        agreed = None not in picked.values() and len(set(picked.values())) == 1
        ctx.emit(RoundClosedEvent(summary={"choices": picked, "agreed": agreed}))
        return {"choices": picked, "agreed": agreed, "agreed_on": next(iter(picked.values())) if agreed else None}


def demo_lineup(model: str, n: int = 3, temperature: float = 0.8) -> list[AgentSpec]:
    return [AgentSpec(name=f"agent-{i + 1}", model=model, options={"temperature": temperature}) for i in range(n)]
