"""Each policy's agreement rule, on scripted models with known answers: clear, ask, refuse, error.

Scripted replies make the rules checkable; no claim here is about a model's behaviour.
"""

from __future__ import annotations

from lexicoord.gate.events import PersonAnswerEvent, QuestionEvent
from tests.gate.conftest import MakeGate, choice, feedback, proposal

CUPS = ["the red cup", "the blue cup"]


async def test_single_clear_costs_one_call(make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": [proposal("clear")]})
    v = await gate.check("Bring me the red cup.", context="A kitchen with one red cup.")
    assert v.status == "clear" and v.clear
    assert v.interpretation == "Bring me the red cup."
    assert v.model_calls == 1 and v.tokens > 0
    assert [s.stance for s in v.seats] == ["clear"]


async def test_single_asks_then_clear_with_the_answer_in_the_next_look(make_gate: MakeGate) -> None:
    seen: list[str] = []

    def second(messages, config):  # the clarification reaches the agent's second look, fenced in the scene
        seen.append(messages[-1].content)
        return proposal("clear")

    gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")], "agent-2": second})
    v = await gate.check("Bring me the cup.")
    assert v.status == "ask" and v.question == "Which cup?" and v.answer_path
    assert v.ambiguity == "underspecified"
    done = await gate.answer(v.gate_id, text="The blue one")
    assert done.status == "clear"
    assert done.interpretation == "Bring me the cup. (clarified: The blue one)"
    assert "The person answered: The blue one" in seen[0] and "<<<SCENE" in seen[0]
    assert [c.text for c in done.clarifications] == ["The blue one"]


async def test_single_still_unclear_at_the_bound_refuses(make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")],
                                "agent-2": [proposal("ambiguous", "Which shelf?")]})
    v = await gate.check("Bring me the cup.")
    done = await gate.answer(v.gate_id, text="any")
    assert done.status == "refuse" and "still unclear after 1 clarification" in (done.reason or "")
    assert [c.text for c in done.clarifications] == ["any"] and done.question == "Which shelf?"


async def test_a_second_question_shows_the_answers_so_far(make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")],
                                "agent-2": [proposal("ambiguous", "Which shelf?")], "agent-3": [proposal("clear")]},
                     clarifications=2)
    v = await gate.check("Bring me the cup.")
    again = await gate.answer(v.gate_id, text="the blue one")
    assert again.status == "ask" and again.question == "Which shelf?"
    assert [(c.question, c.text) for c in again.clarifications] == [("Which cup?", "the blue one")]
    assert [c.text for c in (await gate.get(v.gate_id)).clarifications] == ["the blue one"]
    done = await gate.answer(v.gate_id, text="the top one")
    assert done.status == "clear" and len(done.clarifications) == 2


async def test_no_clarifications_allowed_refuses_without_asking(make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")]}, clarifications=0)
    v = await gate.check("Bring me the cup.")
    assert v.status == "refuse" and v.question == "Which cup?"


async def test_single_unreadable_reply_is_an_error_never_clear(make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": ["it is clear, go ahead", "CLEAR!!"]})
    v = await gate.check("Bring me the cup.")
    assert v.status == "error" and "no readable verdict" in (v.reason or "")


async def test_debate_consensus_on_clear_is_clear(make_gate: MakeGate) -> None:
    gate = make_gate("debate", {"leader": [proposal("clear")], "follower-1": [feedback("agree")],
                                "follower-2": [feedback("agree")]})
    v = await gate.check("Put the apple in the bowl.", context="One apple, one bowl.")
    assert v.status == "clear"
    assert {s.name: s.stance for s in v.seats} == {"leader": "clear", "follower-1": "agree", "follower-2": "agree"}
    assert v.model_calls == 3


async def test_debate_without_consensus_asks_the_followers_question(make_gate: MakeGate) -> None:
    gate = make_gate("debate", {"leader": [proposal("clear"), proposal("clear")],
                                "follower-1": [feedback("disagree", "Which bowl?"), feedback("disagree", "Which bowl?")],
                                "follower-2": [feedback("agree"), feedback("agree")],
                                "leader-2": [proposal("clear")], "follower-1-2": [feedback("agree")],
                                "follower-2-2": [feedback("agree")]}, rounds=2)
    v = await gate.check("Put the apple in the bowl.")
    assert v.status == "ask" and v.question == "Which bowl?" and v.ambiguity == "divergent"
    done = await gate.answer(v.gate_id, text="the glass bowl")
    assert done.status == "clear"


async def test_debate_no_consensus_and_no_question_refuses(make_gate: MakeGate) -> None:
    gate = make_gate("debate", {"leader": [proposal("clear")], "follower-1": [feedback("disagree")],
                                "follower-2": [feedback("agree")]}, rounds=1)
    v = await gate.check("Put the apple in the bowl.")
    assert v.status == "refuse" and "no consensus" in (v.reason or "")


async def test_coalition_first_round_convergence_is_clear(make_gate: MakeGate) -> None:
    gate = make_gate("coalition", {f"player-{i}": [choice("the red cup")] for i in (1, 2, 3)})
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    assert v.status == "clear" and v.interpretation == "the red cup"
    assert v.options == CUPS and {s.choice for s in v.seats} == {"the red cup"}


async def test_coalition_divergence_asks_the_person_and_their_answer_clarifies(make_gate: MakeGate) -> None:
    seen: list[str] = []

    def player(first: str):
        def reply(messages, config):  # the first round as given; after the clarification, what the person meant
            seen.append(messages[-1].content)
            return choice(first if len(seen) <= 3 else "the blue cup")
        return reply

    gate = make_gate("coalition", {"player-1": player("the red cup"), "player-2": player("the blue cup"),
                                   "player-3": player("the red cup")})
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    assert v.status == "ask" and v.ambiguity == "divergent"
    assert v.options[0] == "the red cup"  # the most chosen reading first
    assert sorted(s.choice or "" for s in v.seats) == ["the blue cup", "the red cup", "the red cup"]
    done = await gate.answer(v.gate_id, choice="the blue cup")
    assert done.status == "clear" and done.interpretation == "the blue cup"
    assert all("The person means: the blue cup." in s for s in seen[3:]) and len(seen) == 6


async def test_coalition_no_convergence_at_the_bound_refuses(make_gate: MakeGate) -> None:
    gate = make_gate("coalition", {"player-1": [choice("the red cup")] * 2, "player-2": [choice("the blue cup")] * 2,
                                   "player-3": [choice("the red cup")] * 2})
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    done = await gate.answer(v.gate_id, text="a cup")
    assert done.status == "refuse" and "did not converge" in (done.reason or "")


async def test_coalition_person_declining_refuses(make_gate: MakeGate) -> None:
    gate = make_gate("coalition", {"player-1": [choice("the red cup")], "player-2": [choice("the blue cup")],
                                   "player-3": [choice("the red cup")]})
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    done = await gate.answer(v.gate_id, refuse=True)
    assert done.status == "refuse" and "declined" in (done.reason or "")


async def test_coalition_writes_the_readings_when_none_are_given(make_gate: MakeGate) -> None:
    gate = make_gate("coalition", {"writer": [{"readings": ["wipe the table", "set the table"]}],
                                   **{f"player-{i}": [choice("set the table")] for i in (1, 2, 3)}})
    v = await gate.check("Do the table.")
    assert v.status == "clear" and v.options == ["wipe the table", "set the table"]


async def test_adaptive_clear_costs_one_call_and_unclear_escalates_to_the_debate(make_gate: MakeGate) -> None:
    gate = make_gate("adaptive", {"agent": [proposal("clear")]})
    v = await gate.check("Open the door.")
    assert v.status == "clear" and v.model_calls == 1 and v.escalated is False and v.policy == "adaptive"
    gate = make_gate("adaptive", {"agent": [proposal("ambiguous", "Which door?")], "leader": [proposal("clear")],
                                  "follower-1": [feedback("agree")], "follower-2": [feedback("agree")]})
    v = await gate.check("Open the door.")
    assert v.status == "clear" and v.escalated is True and v.model_calls == 4


async def test_the_record_holds_the_question_and_the_persons_move(make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("clear")]})
    v = await gate.check("Bring me the cup.")
    await gate.answer(v.gate_id, text="The blue one")
    [(record, events)] = list(gate.store.iter_run_events(v.run_id))
    assert record.key == v.episode_key and record.status == "done" and record.outcome["status"] == "clear"
    asked = [e for e in events if isinstance(e, QuestionEvent)]
    said = [e for e in events if isinstance(e, PersonAnswerEvent)]
    assert [e.question for e in asked] == ["Which cup?"] and [(e.agent, e.text) for e in said] == [("person", "The blue one")]


def odds(**letters: float) -> dict:
    """A scorer's reply: its first token and the log-probabilities of the first token's alternatives."""
    return {"text": max(letters, key=lambda k: letters[k]), "__logprobs__": {k: v for k, v in letters.items()}}


async def test_conformal_one_option_in_the_set_is_clear(make_gate: MakeGate) -> None:
    gate = make_gate("conformal", {"scorer": [odds(A=-0.05, B=-3.5, The=-4.0)]}, qhat=0.5)
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    assert v.status == "clear" and v.interpretation == "the red cup" and v.model_calls == 1
    assert v.conformal is not None and v.conformal.kept == ["the red cup"]
    assert v.conformal.probabilities["the red cup"] > 0.9


async def test_conformal_several_in_the_set_ask_which_and_a_picked_option_decides(make_gate: MakeGate) -> None:
    gate = make_gate("conformal", {"scorer": [odds(A=-0.8, **{" B": -0.9}, C=-6.0)]}, qhat=0.7)
    v = await gate.check("Hand me the cup.", candidates=[*CUPS, "the green cup"])
    assert v.status == "ask" and v.options == ["the red cup", "the blue cup"] and v.ambiguity == "divergent"
    done = await gate.answer(v.gate_id, choice="the blue cup")
    assert done.status == "clear" and done.interpretation == "the blue cup" and done.model_calls == 1
    assert [s.kind for s in done.seats] == ["model", "person"]


async def test_conformal_a_free_answer_rescores_then_refuses_at_the_bound(make_gate: MakeGate) -> None:
    gate = make_gate("conformal", {"scorer": [odds(A=-0.7, B=-0.7)] * 2}, qhat=0.9)
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    done = await gate.answer(v.gate_id, text="whichever is cleaner")
    assert done.status == "refuse" and done.model_calls == 2 and "2 options stayed" in (done.reason or "")


async def test_conformal_a_first_token_that_is_no_letter_is_an_error(make_gate: MakeGate) -> None:
    gate = make_gate("conformal", {"scorer": [{"text": "Sure", "__logprobs__": {"Sure": -0.1, "The": -2.0}}]},
                     qhat=0.5)
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    assert v.status == "error" and "none of the option letters" in (v.reason or "")


async def test_conformal_needs_a_threshold(make_gate: MakeGate) -> None:
    import pytest

    from lexicoord.errors import ConfigError

    with pytest.raises(ConfigError, match="calibrate"):
        make_gate("conformal", {})
