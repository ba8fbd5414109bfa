"""What the single-agent baseline and the debate share: settings, outcome, the prompt head, the judge.

The head (scene and instruction, fenced) opens every prompt of an episode, in
the same words for every agent, so a backend that reuses prompt prefixes
evaluates it once (see the embedded model's ``prompt_cache``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.core.audience import Audience
from lexicoord.core.context import EpisodeContext
from lexicoord.core.seat import Request, Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import LexicoordError
from lexicoord.prompting import Prompts, fence
from lexicoord.protocols.debate.items import DebateItem
from lexicoord.protocols.debate.replies import JudgeEvent, ReplySettings

PROMPTS = Prompts("lexicoord.protocols.debate")


class DebateSettings(ReplySettings):
    condition: Literal["single", "debate"] = "debate"
    rounds: int = Field(default=5, ge=1, le=20)
    #: An LLM judge as a second opinion on ambiguous instructions (``provider/model``), or none.
    judge: str | None = None


class JudgeVerdict(BaseModel):
    model: str
    asks_slot: bool | None
    failure: str | None = None


class FinalFeedback(BaseModel):
    agent: str
    stance: str | None
    reasoning: str = ""
    alternative: str = ""


class DebateOutcome(BaseModel):
    """One episode of the study: a single agent's answer or a debate's end, as every statistic reads it."""

    model_config = ConfigDict(extra="ignore")

    condition: Literal["single", "debate"]
    #: ``answered`` (single), ``consensus`` or ``max_rounds`` (debate), or ``error`` (an unreadable reply).
    termination: Literal["answered", "consensus", "max_rounds", "error"]
    error: str | None = None
    rounds: int
    verdict: Literal["clear", "ambiguous"] | None = None
    question: str = ""
    reasoning: str = ""
    judge: JudgeVerdict | None = None
    # the single-agent baseline
    model: str | None = None
    agent: str | None = None
    latency: float | None = None
    # the debate
    leader: str | None = None
    leader_model: str | None = None
    models: list[str | None] = Field(default_factory=list)
    consensus: bool | None = None
    final_feedback: list[FinalFeedback] = Field(default_factory=list)

    @property
    def config_model(self) -> str:
        """The model a configuration is labelled by: the single agent's, or the debate's leader's."""
        return (self.model if self.condition == "single" else self.leader_model) or ""


def head(item: DebateItem) -> str:
    return PROMPTS.render("debate_head", context=fence(item.context, "SCENE"),
                         instruction=fence(item.instruction, "INSTRUCTION"))


def scene(item: DebateItem) -> dict[str, Any]:
    """What every seat of an episode sees of the item: the scene and the instruction, never the answer key."""
    return {"scene": item.context, "instruction": item.instruction}


def seat(ctx: EpisodeContext[DebateItem], spec: AgentSpec) -> Seat:
    return ctx.seat(spec, system_prompt=PROMPTS.render("debate_system"))


async def judge(ctx: EpisodeContext[DebateItem], settings: DebateSettings, question: str) -> JudgeVerdict | None:
    """The judge's yes/no on an ambiguous instruction's final question; ``None`` when there is nothing to judge."""
    item = ctx.item
    if not settings.judge or not item.ambiguous or not question or item.slot is None:
        return None
    ask_about = item.slot.ask_about
    judge_seat = ctx.seat(AgentSpec(name="judge", model=settings.judge),
                          system_prompt=PROMPTS.render("debate_judge_system"))
    prompt = PROMPTS.render("debate_judge", head=head(item), ask_about=fence(ask_about, "AMBIGUITY"),
                           question=fence(question, "QUESTION"))
    request = Request(kind="judge", view={**scene(item), "ask_about": ask_about, "question": question},
                      prompt=prompt, choices=("yes", "no"), temperature=0.0, max_tokens=4)
    only_judge = Audience.only("judge")
    try:
        answer = await judge_seat.answer(request)
    except LexicoordError as exc:  # a second opinion that failed never costs the debate it was to judge
        ctx.emit(JudgeEvent(agent="judge", model=settings.judge, asks_slot=None, failure=str(exc), audience=only_judge))
        return JudgeVerdict(model=settings.judge, asks_slot=None, failure=str(exc))
    verdict = (answer.value["choice"] == "yes") if answer.ok and answer.value else None
    # A reply that is neither yes nor no is a failure with its reason, never a silent "no".
    failure = None if verdict is not None else answer.failure or f"no yes/no answer ({answer.action})"
    ctx.emit(JudgeEvent(agent="judge", model=settings.judge, asks_slot=verdict, raw=answer.raw,
                        failure=failure, audience=only_judge))
    return JudgeVerdict(model=settings.judge, asks_slot=verdict, failure=failure)
