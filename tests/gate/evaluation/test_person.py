"""The simulated person answers only from the item's gold fields, and says what it means as people do."""

from __future__ import annotations

import pytest

from lexicoord.gate.evaluation.person import meant, reply

KNOWNO = {"intended": ["pick up the RedBull and bring it to the person"], "intent": "pick up the RedBull and bring it"
          " to the person", "answer": None}
AMBIK = {"intended": ["Frying pan"], "intent": "frying pan", "answer": "Use the frying pan."}


@pytest.mark.parametrize(("gold", "options", "expected"), [
    (KNOWNO, ["pick up the Coke and bring it to the person", "pick up the RedBull and bring it to the person"],
     {"choice": "pick up the RedBull and bring it to the person",
      "text": "I mean: pick up the RedBull and bring it to the person."}),
    # an option written differently (case, punctuation) is still the one meant
    (KNOWNO, ["Pick up the RedBull, and bring it to the person."],
     {"choice": "Pick up the RedBull, and bring it to the person.",
      "text": "I mean: pick up the RedBull and bring it to the person."}),
    # the question offers no option meant (a conformal set that lost it): words only
    (KNOWNO, ["pick up the Coke and bring it to the person"],
     {"text": "I mean: pick up the RedBull and bring it to the person."}),
    (KNOWNO, [], {"text": "I mean: pick up the RedBull and bring it to the person."}),
    (AMBIK, ["grill pan", "frying pan"], {"choice": "frying pan", "text": "Use the frying pan."}),
    (AMBIK, [], {"text": "Use the frying pan."}),
    ({"intended": ["pick up the Coke", "pick up the Pepsi"], "answer": None}, ["pick up the Pepsi", "x"],
     {"choice": "pick up the Pepsi", "text": "Any of these: pick up the Coke; pick up the Pepsi."}),
])
def test_the_answer_comes_from_the_gold_fields(gold: dict[str, object], options: list[str],
                                               expected: dict[str, str]) -> None:
    assert reply(gold, options) == expected


def test_a_long_gold_answer_is_cut_to_what_the_gate_accepts() -> None:
    assert len(reply({"intended": [], "answer": "word " * 200}, [])["text"]) == 400


@pytest.mark.parametrize(("option", "is_meant"), [
    ("Frying pan", True), ("the frying pan", True), ("FRYING PAN!", True), ("frying pans", False), ("pan", False),
])
def test_which_options_it_means(option: str, is_meant: bool) -> None:
    assert meant(option, ["frying pan"]) is is_meant
