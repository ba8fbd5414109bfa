"""The leader-follower leader-follower debate (Davila et al., section 3.3.2), and nothing else.

- One leader and (by default) two followers; the line-up's first seat leads.
- Round 1: the leader proposes (reasoning, then the verdict ``clear`` or one
  clarifying question). Each follower, independently, answers ``agree`` or
  ``disagree`` with reasoning and, when disagreeing, an optional alternative question.
- Consensus when every follower agrees: the debate ends with the leader's proposal.
- Otherwise the leader reads all the feedback and revises; the followers review
  the revision; up to ``rounds`` rounds (default 5).
- Termination: consensus; ``rounds`` rounds without consensus (recorded as
  non-consensus, with the final proposal and feedback); or an unrecoverable
  error: a reply that does not parse after one retry ends the debate, recorded
  with its raw text. A model that cannot be reached fails the episode instead,
  so a resumed run plays it again.

Each agent keeps its own conversation: a later round's prompt extends the
agent's earlier ones, which is what makes prompt-prefix reuse pay off.
Rotation of the leader is a property of the line-ups a run builds
(:func:`rotations`), not of one debate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import RoundClosedEvent
from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.prompting import Prompts, fence
from lexicoord.protocols.debate.common import (
    DebateOutcome,
    DebateSettings,
    FinalFeedback,
    head,
    judge,
    scene,
    seat,
)
from lexicoord.protocols.debate.items import DebateItem
from lexicoord.protocols.debate.replies import (
    Feedback,
    FeedbackEvent,
    ProposalEvent,
    ask_feedback,
    ask_proposal,
    feedback_event,
    feedback_from,
    feedback_request,
    proposal_event,
    proposal_from,
    proposal_request,
)

PROMPTS = Prompts("lexicoord.protocols.debate")


def rotations(seats: Sequence[AgentSpec], followers: int = 2) -> list[list[AgentSpec]]:
    """One line-up per seat, each seat leading once; followers are the next seats in turn.

    Three models give the paper's three debates per instruction; one model gives
    one debate among three copies of it.
    """
    if not seats:
        raise ConfigError("A debate needs at least one model.")
    n = len(seats)
    lineups = []
    for lead in range(n):
        lineup = []
        for j in range(followers + 1):
            spec = seats[(lead + j) % n]
            name = spec.name if j < n else f"{spec.name}-{j // n + 1}"
            lineup.append(spec.model_copy(update={"name": name, "role": "leader" if j == 0 else "follower"}))
        lineups.append(lineup)
    return lineups


def _feedback_text(feedback: dict[str, Feedback]) -> str:
    lines = []
    for name, f in feedback.items():
        alt = f" Alternative question: {f.alternative}" if f.alternative else ""
        lines.append(f"- {name}: {f.stance}. {f.reasoning}{alt}")
    return fence("\n".join(lines), "FEEDBACK")


class LeaderFollowerDebate(Protocol[DebateItem, DebateSettings, DebateOutcome]):
    name = "debate-rounds"
    item_model = DebateItem
    settings_model = DebateSettings
    outcome_model = DebateOutcome

    async def play(self, ctx: EpisodeContext[DebateItem]) -> DebateOutcome:
        settings = self.settings_of(ctx)
        if len(ctx.spec.lineup) < 2:
            raise ConfigError("A debate needs a leader and at least one follower.")
        leader_spec, *follower_specs = ctx.spec.lineup
        leader = seat(ctx, leader_spec)
        followers = [seat(ctx, s) for s in follower_specs]
        top = head(ctx.item)
        n = str(settings.sentences)
        shown = scene(ctx.item)

        def feedback_seen(name: str, round_: int) -> dict[str, Feedback]:
            """The feedback of ``round_`` that seat ``name`` may see (the leader sees all of it)."""
            return {e.agent or "": feedback_from(e) for e in ctx.visible_to(name)
                    if isinstance(e, FeedbackEvent) and e.round == round_}

        def proposal_seen(name: str, round_: int) -> ProposalEvent:
            return next(e for e in reversed(ctx.visible_to(name))
                        if isinstance(e, ProposalEvent) and e.round == round_)

        proposal = None
        feedback: dict[str, Feedback] = {}
        termination: Literal["consensus", "max_rounds", "error"] = "max_rounds"
        error = None
        rounds = 0
        for round_ in range(1, settings.rounds + 1):
            rounds = round_
            ctx.recorder.round = round_
            ctx.recorder.phase = "propose"
            view: dict[str, Any] = {**shown, "role": "leader", "round": round_, "followers": len(followers),
                                    "sentences": settings.sentences}
            if round_ == 1:
                prompt = PROMPTS.render("debate_lead", head=top, followers=str(len(followers)), sentences=n)
            else:
                seen = feedback_seen(leader.name, round_ - 1)
                view["feedback"] = [{"agent": k, **v.model_dump(include={"stance", "reasoning", "alternative"})}
                                    for k, v in seen.items()]
                prompt = PROMPTS.render("debate_revise", round=str(round_), feedback=_feedback_text(seen), sentences=n)
            proposal = await ask_proposal(leader, proposal_request(prompt, view, settings, round_))
            ctx.emit(proposal_event(leader.name, round_, proposal, role="leader"))
            if not proposal.ok:
                termination, error = "error", f"{leader.name}: {proposal.failure}"
                break

            def review(name: str, round_: int = round_) -> tuple[str, dict[str, Any]]:
                """The follower's prompt and view, from the proposal it may see."""
                seen = proposal_from(proposal_seen(name, round_))
                view = {**shown, "role": "follower", "round": round_, "leader": leader.name,
                        "proposal": seen.model_dump(include={"reasoning", "verdict", "question"}),
                        "sentences": settings.sentences}
                if round_ > 1:  # what this follower may see of the last round's feedback: its own
                    view["feedback"] = [{"agent": k, **v.model_dump(include={"stance", "reasoning", "alternative"})}
                                        for k, v in feedback_seen(name, round_ - 1).items()]
                if round_ == 1:
                    text = PROMPTS.render("debate_follow", head=top, leader=leader.name, proposal=seen.shown(),
                                         sentences=n)
                else:
                    text = PROMPTS.render("debate_follow_next", round=str(round_), leader=leader.name,
                                         proposal=seen.shown(), sentences=n)
                return text, view

            # Followers judge independently: every one reads the same proposal, none sees another's answer.
            ctx.recorder.phase = "review"
            requests = [feedback_request(*review(f.name), settings, round_) for f in followers]
            answers = await asyncio.gather(*(ask_feedback(f, r) for f, r in zip(followers, requests)))
            feedback = {f.name: a for f, a in zip(followers, answers)}
            for name, answer in feedback.items():
                ctx.emit(feedback_event(name, leader.name, round_, answer))
            broken = [name for name, a in feedback.items() if not a.ok]
            agree = sum(1 for a in feedback.values() if a.stance == "agree")
            ctx.emit(RoundClosedEvent(summary={"agree": agree, "followers": len(followers),
                                               "consensus": agree == len(followers) and not broken}))
            if broken:
                termination, error = "error", "; ".join(f"{b}: {feedback[b].failure}" for b in broken)
                break
            if agree == len(followers):
                termination = "consensus"
                break

        assert proposal is not None
        return DebateOutcome(
            condition="debate", leader=leader.name, leader_model=leader_spec.model,
            models=[s.model for s in ctx.spec.lineup],
            consensus=termination == "consensus", termination=termination, error=error, rounds=rounds,
            verdict=proposal.verdict, question=proposal.question, reasoning=proposal.reasoning,
            final_feedback=[FinalFeedback(agent=k, **v.model_dump(include={"stance", "reasoning", "alternative"}))
                            for k, v in feedback.items()],
            judge=await judge(ctx, settings, proposal.question) if termination != "error" else None,
        )
