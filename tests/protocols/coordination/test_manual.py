import pytest

from lexicoord.agents.llm import LLMAgent
from lexicoord.errors import ConfigError
from lexicoord.models import Model
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.coordination.manual import (
    Proposal,
    equivalent,
    gather_proposals,
    manual_item,
    merge_proposals,
    validate_manual,
)
from lexicoord.protocols.coordination.players import LLMPlayer


def test_validation_bounds_lengths_and_finds_the_word() -> None:
    assert validate_manual("  Release   the part now. ", "release") == ("Release the part now.", "release")
    with pytest.raises(ConfigError, match="does not occur"):
        validate_manual("Release the part.", "hold")
    with pytest.raises(ConfigError, match="3 to 400"):
        validate_manual("x" * 401, "x")
    with pytest.raises(ConfigError, match="1 to 40"):
        validate_manual("a b", "")


@pytest.mark.parametrize(
    "a,b,same",
    [
        ("a financial institution", "financial institutions", True),
        ("the land alongside a river", "land alongside the river", True),
        ("the side of a river", "river bank, the land at its side", False),
        ("let go of the part", "let the part go", True),
        ("open the gripper", "send it to the next station", False),
        ("a flying mammal", "a club used in baseball", False),
    ],
)
def test_equivalence(a: str, b: str, same: bool) -> None:
    assert equivalent(a, b) is same


def test_merging_keeps_the_first_wording_and_every_proposer() -> None:
    merged = merge_proposals([
        Proposal(agent="a1", meaning="a financial institution", justification="money"),
        Proposal(agent="a2", meaning="the land alongside a river", justification="water"),
        Proposal(agent="a3", meaning="Financial institutions", justification="deposit"),
        Proposal(agent="a4", meaning="  ", justification="nothing"),
    ])
    assert [o.text for o in merged] == ["a financial institution", "the land alongside a river"]
    assert merged[0].proposers == ["a1", "a3"] and merged[0].justifications == ["money", "deposit"]


def test_the_leader_confirms_an_option_set() -> None:
    item = manual_item("Secure the load.", "secure", ["fasten it", "Fasten it", "guard it", " "])
    assert item.options == ["fasten it", "guard it"] and item.open and item.intended is None
    with pytest.raises(ConfigError, match="2 to 5 distinct options; there are 1"):
        manual_item("Secure the load.", "secure", ["fasten it"])


async def test_llm_players_propose_and_bad_replies_are_dropped() -> None:
    replies = {"a1": [{"meaning": "fasten it down", "justification": "load"}], "a2": ["junk", "junk"],
               "a3": [{"meaning": "fasten it down firmly", "justification": "x"}]}
    model = Model(ScriptedProvider("p", replies))
    players = [LLMPlayer(LLMAgent(n, model)) for n in ("a1", "a2", "a3")]
    proposals = await gather_proposals(players, "Secure the load.", "secure")
    assert [p.agent for p in proposals] == ["a1", "a3"]
    assert len(merge_proposals(proposals)) == 1


@pytest.mark.parametrize("a,b", [("a river bank", "not a river bank"), ("let go of it", "don't let go of it")])
def test_a_gloss_and_its_negation_never_merge(a: str, b: str) -> None:
    assert not equivalent(a, b)


def test_merging_does_not_depend_on_order() -> None:
    texts = ["x y z w", "x y z v", "x y z v u"]
    forward = merge_proposals([Proposal(agent=str(i), meaning=t) for i, t in enumerate(texts)])
    backward = merge_proposals([Proposal(agent=str(i), meaning=t) for i, t in reversed(list(enumerate(texts)))])
    assert sorted(len(o.proposers) for o in forward) == sorted(len(o.proposers) for o in backward)
