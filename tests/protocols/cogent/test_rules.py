"""COGENT, VANILLA and SINGLE with scripted agents: the call order, who sees what in each call, the lexicon
events, and FINALIZE (deterministic replies for the rules, not model behaviour)."""

from __future__ import annotations

from typing import Any

import pytest

from lexicoord.core.spec import AgentSpec
from lexicoord.lexicon.events import TermCandidateEvent, TermsSharedEvent, TermUsedEvent
from lexicoord.models import Model
from lexicoord.models.observe import ModelCallEvent, current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.cogent import CogentStudy, ResponseEvent, finalize
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.benchmarks import GSM8K

ITEM = {"id": "eggs", "question": "Janet's ducks lay 16 eggs. She eats 3 and bakes with 4, and sells the rest "
        "at $2 each. How much does she make?", "answer": "18", "solution": "#### 18"}
COINED = {"A": "[PART 1] The eggleft count is 9, so eggleft times 2.\n[PART 2]\neggleft = eggs left to sell\n",
          "B": "[PART 1] Using sellprice 2 on 9 eggs.\n[PART 2]\nsellprice = price of one egg\nlock = a word\n"}


def stage(prompt: str) -> str:
    if "[PRIVATE NOTE" in prompt:
        return "coin"
    if "KNOWN_TERMS (coined" in prompt:
        return "use"
    return "debate" if "Debate round" in prompt else "init"


def script(answers: dict[str, str]) -> Any:
    def reply(messages: Any, config: Any) -> str:
        agent = current_agent.get() or "?"
        kind = stage(messages[-1].content)
        if kind == "coin":
            return COINED[agent]
        if kind == "use":
            return f"{agent} keeps eggleft and sellprice in view.\n#### {answers[agent]}"
        return f"{agent} thinks.\n#### {answers[agent]}"

    return reply


async def play(tmp_path, variant: str, answers: dict[str, str], **settings: Any):
    tmp_path.mkdir(parents=True, exist_ok=True)
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("c", script(answers))), "scripted/c")
    seats = ["A"] if variant == "single" else ["A", "B"]
    lineup = [AgentSpec(name=n, model="scripted/c") for n in seats]
    runner = Runner(Store(str(tmp_path / "c.db")), CogentStudy(), models=pool)
    await runner.run("c", grid([ITEM], [lineup], settings=[{"variant": variant, "task": "gsm8k", **settings}]))
    [(episode, events)] = list(runner.store.iter_run_events("c"))
    assert episode.status == "done", episode.error
    return episode.outcome, events


def prompt_of(events: list[Any], agent: str, n: int) -> str:
    calls = [e for e in events if isinstance(e, ModelCallEvent) and e.agent == agent]
    return calls[n].messages[-1].content


async def test_cogent_calls_in_the_papers_order(tmp_path) -> None:
    outcome, events = await play(tmp_path, "cogent", {"A": "18", "B": "18"})
    order = [(e.agent, e.stage, e.round) for e in events if isinstance(e, ResponseEvent)]
    per_round = lambda r, coin: ([("A", "coin", r)] * 2 + [("B", "coin", r)] * 2 if coin else []) + [  # noqa: E731
        ("A", "use", r), ("B", "use", r)]
    assert order == [("A", "init", 0), ("B", "init", 0), *per_round(1, True), *per_round(2, True), *per_round(3, False)]
    assert outcome["answer"] == "18" and outcome["correct"] and outcome["rule"] == "agree"


async def test_who_sees_what_in_each_call(tmp_path) -> None:
    _, events = await play(tmp_path, "cogent", {"A": "18", "B": "17"}, rounds=1, passes=1, coin_rounds=1)
    a_coin, b_coin = prompt_of(events, "A", 1), prompt_of(events, "B", 1)
    assert "eggleft" not in b_coin and "sellprice" not in a_coin, "before the share each lexicon is private"
    a_use, b_use = prompt_of(events, "A", 2), prompt_of(events, "B", 2)
    assert COINED["B"].strip() in a_use, "A's use prompt holds B's latest (coined) response"
    assert "eggleft = eggs left to sell (coined by A)" in a_use and "sellprice = price of one egg" in a_use
    assert "Consider or reuse at least one of the known terms." in a_use
    assert "A keeps eggleft and sellprice in view.\n#### 18" in b_use, "B's use prompt holds A's fresh answer"
    coin_events = [e for e in events if isinstance(e, ResponseEvent) and e.stage == "coin"]
    assert all(e.audience.agents == (e.agent,) for e in coin_events), "a coining pass is its coiner's own"


async def test_terms_are_judged_shared_and_their_uses_counted(tmp_path) -> None:
    outcome, events = await play(tmp_path, "cogent", {"A": "18", "B": "18"}, rounds=1, passes=1, coin_rounds=1)
    judged = [(e.agent, e.term, e.reason) for e in events if isinstance(e, TermCandidateEvent)]
    assert judged == [("A", "eggleft", None), ("B", "sellprice", None), ("B", "lock", "dictionary_word")]
    [shared] = [e for e in events if isinstance(e, TermsSharedEvent)]
    assert shared.terms == ["eggleft", "sellprice"] and shared.audience.public
    uses = {(e.agent, e.term, e.coiner) for e in events if isinstance(e, TermUsedEvent)}
    assert ("B", "eggleft", "A") in uses and ("A", "sellprice", "B") in uses, "cross-agent uptake is recorded"
    assert (outcome["terms_accepted"], outcome["terms_rejected"]) == (2, 1)


async def test_vanilla_is_sequential_debate_without_a_lexicon(tmp_path) -> None:
    outcome, events = await play(tmp_path, "vanilla", {"A": "18", "B": "20"}, rounds=2)
    order = [(e.agent, e.stage, e.round) for e in events if isinstance(e, ResponseEvent)]
    assert order == [("A", "init", 0), ("B", "init", 0), ("A", "debate", 1), ("B", "debate", 1),
                     ("A", "debate", 2), ("B", "debate", 2)]
    b_round1 = prompt_of(events, "B", 1)
    assert b_round1.index("B thinks.\n#### 20") < b_round1.index("A thinks.\n#### 18"), "own first, then A's fresh"
    assert not [e for e in events if isinstance(e, (TermCandidateEvent, TermsSharedEvent))]
    assert outcome["rule"] == "tie" and outcome["answer"] == "20" and not outcome["correct"], "B, the later speaker"


async def test_single_is_one_call(tmp_path) -> None:
    outcome, events = await play(tmp_path, "single", {"A": "18"})
    assert [e.stage for e in events if isinstance(e, ResponseEvent)] == ["single"]
    assert outcome["correct"] and outcome["rule"] == "single"


def calls(events: list[Any]) -> int:
    return sum(1 for e in events if isinstance(e, ModelCallEvent))


async def test_call_matched_vanilla_makes_as_many_calls_as_cogent(tmp_path) -> None:
    _, cogent = await play(tmp_path / "c", "cogent", {"A": "18", "B": "18"})
    outcome, matched = await play(tmp_path / "m", "vanilla_matched", {"A": "18", "B": "18"})
    _, vanilla = await play(tmp_path / "v", "vanilla", {"A": "18", "B": "18"})
    assert calls(matched) == calls(cogent) == 16 and calls(vanilla) == 8
    assert outcome["rounds"] == 7 and not [e for e in matched if isinstance(e, TermCandidateEvent)]


async def test_private_only_coinage_never_shares(tmp_path) -> None:
    _, events = await play(tmp_path, "cogent_private", {"A": "18", "B": "17"}, rounds=1, passes=1, coin_rounds=1)
    assert not [e for e in events if isinstance(e, TermsSharedEvent)]
    a_use, b_use = prompt_of(events, "A", 2), prompt_of(events, "B", 2)
    assert "eggleft = eggs left to sell" in a_use and "sellprice" not in a_use, "A's own lexicon only"
    assert "B thinks.\n#### 17" in a_use and "sellprice = price" not in a_use, "B's public reply, not its coining pass"
    assert "Consider or reuse at least one of the known terms." in a_use
    assert "eggleft" not in b_use.split("The other agent's answer:")[0], "B never sees A's lexicon"
    assert "NEW TERM" not in a_use + b_use, "a term declared in a public turn would be shared by its text"
    uses = {(e.agent, e.term, e.coiner) for e in events if isinstance(e, TermUsedEvent)}
    assert all(agent == coiner for agent, _, coiner in uses), "only an agent's own terms can be used"


async def test_public_board_without_forced_reuse(tmp_path) -> None:
    _, events = await play(tmp_path, "cogent_free", {"A": "18", "B": "17"}, rounds=1, passes=1, coin_rounds=1)
    a_use = prompt_of(events, "A", 2)
    assert "sellprice = price of one egg" in a_use and COINED["B"].strip() in a_use
    assert "Consider or reuse" not in a_use and [e for e in events if isinstance(e, TermsSharedEvent)]


async def test_log_only_coinage_is_recorded_but_never_shown(tmp_path) -> None:
    outcome, events = await play(tmp_path, "cogent_log", {"A": "18", "B": "17"}, rounds=2, passes=2, coin_rounds=2)
    assert outcome["terms_accepted"] >= 2, "the terms are still judged and recorded"
    for agent in ("A", "B"):
        for prompt in [e.messages[-1].content for e in events if isinstance(e, ModelCallEvent) and e.agent == agent]:
            assert "eggleft =" not in prompt and "sellprice =" not in prompt and "Consider or reuse" not in prompt
    assert not [e for e in events if isinstance(e, TermsSharedEvent)]


@pytest.mark.parametrize("a,b,tie,answer,rule", [
    ("18", "18.0", "later", "18.0", "agree"),
    ("18", None, "later", "18", "one_valid"),
    (None, "7", "later", "7", "one_valid"),
    ("18", "7", "later", "7", "tie"),
    ("18", "7", "earlier", "18", "tie"),
    ("18", "7", "none", None, "tie"),
    (None, None, "later", None, "none"),
])
def test_finalize_reads_only_the_latest_predictions(a, b, tie, answer, rule) -> None:
    assert finalize(a, b, GSM8K(), tie) == (answer, rule)


async def test_uses_in_a_private_coining_pass_are_recorded_as_private(tmp_path) -> None:
    _, events = await play(tmp_path, "cogent", {"A": "18", "B": "18"}, rounds=2, passes=1, coin_rounds=2)
    private = [e for e in events if isinstance(e, TermUsedEvent) and not e.public]
    # Round 2: A's pass says "eggleft" twice (its own term, on the board since round 1); B's says "sellprice" once.
    assert {(e.agent, e.term, e.coiner, e.count, e.round) for e in private} == {("A", "eggleft", "A", 2, 2),
                                                                                ("B", "sellprice", "B", 1, 2)}
    assert all(e.audience.agents == (e.agent,) for e in private), "a private use is its user's own"


SAME = "[PART 1] The eggleft count is 9, so eggleft times 2 is 18.\n[PART 2]\neggleft = eggs left to sell"


def lexicon_of(prompt: str) -> tuple[str, str]:
    """A use prompt split into (the prompt without its lexicon block, the block)."""
    start, end = prompt.index("KNOWN_TERMS (coined"), prompt.index("Check both answers")
    return prompt[:start] + prompt[end:], prompt[start:end]


async def test_cogent_and_vanilla_prompts_of_a_round_differ_by_the_lexicon_block_only(tmp_path) -> None:
    """Every reply is the same text, so whatever differs between the two variants' calls is the protocol's."""
    runs = {}
    for variant in ("vanilla", "cogent"):
        pool = ModelPool(cache=False)
        pool.add(Model(ScriptedProvider("same", lambda messages, config: SAME)), "scripted/same")
        lineup = [AgentSpec(name=n, model="scripted/same") for n in ("A", "B")]
        runner = Runner(Store(str(tmp_path / f"{variant}.db")), CogentStudy(), models=pool)
        await runner.run("s", grid([ITEM], [lineup], settings=[{"variant": variant, "task": "gsm8k", "rounds": 3,
                                                                "passes": 1, "coin_rounds": 2}]))
        [(_, events)] = list(runner.store.iter_run_events("s"))
        runs[variant] = events
    for agent in ("A", "B"):
        vanilla = [e.messages[-1].content for e in runs["vanilla"] if isinstance(e, ModelCallEvent) and e.agent == agent]
        cogent = [e.messages[-1].content for e in runs["cogent"] if isinstance(e, ModelCallEvent) and e.agent == agent
                  and stage(e.messages[-1].content) == "use"]
        assert len(vanilla) == 4 and len(cogent) == 3, "round 0, then three debate (use) rounds"
        for r, (van, cog) in enumerate(zip(vanilla[1:], cogent), start=1):
            rest, block = lexicon_of(cog)
            assert rest == van, f"{agent}, round {r}: the calls differ outside the lexicon block"
            assert "Your previous answer:\n<<<YOURS\n" + SAME in van, "each agent sees its own latest response"
            assert "<<<KNOWN_TERMS\n- eggleft = eggs left to sell (coined by A)\nKNOWN_TERMS>>>" in block
            assert "Consider or reuse at least one of the known terms." in block and "NEW TERM:" in block


def use_turns(declare: dict[str, str]) -> Any:
    """Round-0 answers, then use turns where an agent declares a term as the use prompt invites."""
    def reply(messages: Any, config: Any) -> str:
        agent, kind = current_agent.get() or "?", stage(messages[-1].content)
        if kind == "use" and agent in declare:
            return f"{declare[agent]}\nSo the halfdozen trick gives 18.\n#### 18"
        return f"{agent} thinks.\n#### 18"

    return reply


async def play_use(tmp_path, declare: dict[str, str], **settings: Any):
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("u", use_turns(declare))), "scripted/u")
    lineup = [AgentSpec(name=n, model="scripted/u") for n in ("A", "B")]
    runner = Runner(Store(str(tmp_path / "u.db")), CogentStudy(), models=pool)
    await runner.run("u", grid([ITEM], [lineup], settings=[{"task": "gsm8k", "rounds": 1, "passes": 0, **settings}]))
    [(episode, events)] = list(runner.store.iter_run_events("u"))
    assert episode.status == "done", episode.error
    return episode.outcome, events


@pytest.mark.parametrize("declared", ["NEW TERM: halfdozen = six eggs taken together",
                                      "**New term:** halfdozen = six eggs taken together",
                                      "- new term - halfdozen = six eggs taken together"])
async def test_a_term_declared_in_a_use_turn_is_shared_before_the_next_agents_use(tmp_path, declared) -> None:
    """Algorithm 1, lines 10-12: USE(A) updates L_A, then L_pub = L_A ∪ L_B, then USE(B)."""
    outcome, events = await play_use(tmp_path, {"A": declared})
    [candidate] = [e for e in events if isinstance(e, TermCandidateEvent)]
    assert (candidate.agent, candidate.term, candidate.accepted, candidate.round) == ("A", "halfdozen", True, 1)
    before, shared = [e for e in events if isinstance(e, TermsSharedEvent)]
    assert before.terms == [], "line 9's share, with nothing coined yet (K = 0)"
    b_use = prompt_of(events, "B", 1)
    assert "- halfdozen = six eggs taken together (coined by A)" in b_use.split("KNOWN_TERMS (coined")[1]
    assert "Consider or reuse at least one of the known terms." in b_use
    order = [(type(e).__name__, e.terms if isinstance(e, TermsSharedEvent) else e.agent) for e in events
             if isinstance(e, (TermsSharedEvent, ResponseEvent)) and e.round == 1]
    assert order == [("TermsSharedEvent", []), ("ResponseEvent", "A"), ("TermsSharedEvent", ["halfdozen"]),
                     ("ResponseEvent", "B")], "shared after A's use, before B's"
    assert shared.terms == ["halfdozen"] and outcome["terms_accepted"] == 1


async def test_use_turn_coinage_can_be_turned_off(tmp_path) -> None:
    outcome, events = await play_use(tmp_path, {"A": "NEW TERM: halfdozen = six eggs taken together"},
                                     use_coinage=False)
    assert not [e for e in events if isinstance(e, TermCandidateEvent)]
    assert all(e.terms == [] for e in events if isinstance(e, TermsSharedEvent))
    assert "halfdozen = six" not in prompt_of(events, "B", 1).split("The other agent's answer:")[0]
    assert "NEW TERM" not in prompt_of(events, "A", 1), "no invitation when a use turn's terms are not read"
    assert outcome["terms_accepted"] == 0


async def test_a_declared_term_must_be_used_and_new(tmp_path) -> None:
    _, events = await play_use(tmp_path, {"A": "NEW TERM: eggzone = where eggs are", "B": "NEW TERM: ducks = birds"})
    verdicts = {e.term: e.reason for e in events if isinstance(e, TermCandidateEvent)}
    assert verdicts == {"eggzone": "not_used", "ducks": "task_word"}
