"""What the single-agent baseline and the debate share: settings, the prompt head, the judge.

The head (scene and instruction, fenced) opens every prompt of an episode, in
the same words for every agent, so a backend that reuses prompt prefixes
evaluates it once (see the embedded model's ``prompt_cache``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from lexicoord.agents.base import AgentSpec
from lexicoord.agents.llm import LLMAgent
from lexicoord.agents.prompting import fence, render_prompt
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.models.types import GenerateConfig
from lexicoord.protocols.base import EpisodeContext
from lexicoord.protocols.debate.replies import JudgeEvent, ReplySettings


class DebateSettings(ReplySettings):
    condition: Literal["single", "debate"] = "debate"
    rounds: int = Field(default=5, ge=1, le=20)
    #: An LLM judge as a second opinion on ambiguous instructions (``provider/model``), or none.
    judge: str | None = None


def head(item: dict[str, Any]) -> str:
    return render_prompt("debate_head", context=fence(item["context"], "SCENE"),
                         instruction=fence(item["instruction"], "INSTRUCTION"))


def agent(ctx: EpisodeContext, spec: AgentSpec) -> LLMAgent:
    if spec.kind != "llm":
        raise ConfigError(f"Debate seats are LLM agents; seat '{spec.name}' is of kind '{spec.kind}'.")
    return ctx.llm_agent(spec, system_prompt=render_prompt("debate_system"))


async def judge(ctx: EpisodeContext, settings: DebateSettings, question: str) -> dict[str, Any] | None:
    """The judge's yes/no on an ambiguous instruction's final question; ``None`` when there is nothing to judge."""
    item = ctx.item
    slot = item.get("slot") or {}
    if not settings.judge or not item.get("ambiguous") or not question or not slot.get("ask_about"):
        return None
    judge_agent = ctx.llm_agent(AgentSpec(name="judge", model=settings.judge),
                                system_prompt=render_prompt("debate_judge_system"))
    prompt = render_prompt("debate_judge", head=head(item), ask_about=fence(slot["ask_about"], "AMBIGUITY"),
                           question=fence(question, "QUESTION"))
    try:
        out = await judge_agent.ask_structured(prompt, GenerateConfig(choices=("yes", "no"), temperature=0.0, max_tokens=4))
    except LexicoordError as exc:  # a second opinion that failed never costs the debate it was to judge
        ctx.emit(JudgeEvent(agent="judge", model=settings.judge, asks_slot=None, failure=str(exc)))
        return {"model": settings.judge, "asks_slot": None, "failure": str(exc)}
    verdict = (out.choice == "yes") if out.ok else None
    ctx.emit(JudgeEvent(agent="judge", model=settings.judge, asks_slot=verdict, raw=out.text,
                        failure=None if out.ok else out.parse_error))
    return {"model": settings.judge, "asks_slot": verdict}
