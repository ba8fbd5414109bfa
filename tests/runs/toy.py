"""A tiny protocol for runner tests: every agent answers once; items can ask to fail."""

from __future__ import annotations

import asyncio
from typing import Any

from lexicoord.agents.base import AgentSpec
from lexicoord.protocols.base import EpisodeContext, Protocol
from lexicoord.runs.events import MessageEvent


class Toy(Protocol):
    name = "toy"

    async def play(self, ctx: EpisodeContext) -> dict[str, Any]:
        if ctx.item.get("fail"):
            raise RuntimeError(f"item {ctx.spec.item_id} is set to fail")
        agents = [ctx.llm_agent(s) for s in ctx.spec.lineup]
        ctx.recorder.round = 1
        outs = await asyncio.gather(*(a.ask(f"item {ctx.spec.item_id}") for a in agents))
        for agent, out in zip(agents, outs):
            ctx.emit(MessageEvent(agent=agent.name, content=out.text))
        return {"texts": [o.text for o in outs]}


def lineup(model: str = "scripted/echo", n: int = 2) -> list[AgentSpec]:
    return [AgentSpec(name=f"a{i}", model=model) for i in range(n)]
