"""Whether a question asks about the ambiguous element: the rule on questions as models and people write them."""

from __future__ import annotations

import pytest

from lexicoord.gate.evaluation.judge import asks_about, shared_nouns, written_by_a_model

KNIVES = ["chef's knife", "butter knife"]
PANS = ["frying pan", "grill pan", "saucepan"]
DRINKS = ["RedBull", "Coke", "Pepsi"]
SIDES = ["Sprite", "Pepsi"]


@pytest.mark.parametrize(("question", "element", "about"), [
    ("Which knife should I use to slice the pineapple?", KNIVES, True),
    ("Should I use the chef's knife or the butter knife?", KNIVES, True),
    ("which KNIFE do u want me to use??", KNIVES, True),
    ("Do you mean the chef's knife?", KNIVES, True),
    ("What should I use to cook the bacon?", PANS, False),        # names none of them and no shared noun
    ("Which pan should I use, the frying pan or the grill pan?", PANS, True),
    ("Which pan?", PANS, True),
    ("How thin should the slices be?", KNIVES, False),
    ("Where should I put the pineapple afterwards?", KNIVES, False),
    ("Is the knife sharp enough?", KNIVES, False),               # names the noun but asks no choice
    ("Which drink do you want?", DRINKS, False),                  # the drinks share no noun, none is named
    ("Do you want the Coke or the Pepsi?", DRINKS, True),
    ("Do you want the Coke?", DRINKS, True),
    ("Next to which can should the apple go?", SIDES, False),
    ("Next to the Sprite or the Pepsi?", SIDES, True),
    ("", KNIVES, False),
    ("Which knife?", [], False),
])
def test_the_rule(question: str, element: list[str], about: bool) -> None:
    assert asks_about(question, element) is about


@pytest.mark.parametrize(("question", "by_a_model"), [
    ("Which of these do you mean?", False), ("  Which of these do you mean? ", False),
    ("Your instruction can be read in more than one way. Which do you mean?", False),
    ("Which of these cups do you mean?", True), ("Which pan?", True),
])
def test_the_set_policies_fixed_questions_are_not_judged(question: str, by_a_model: bool) -> None:
    assert written_by_a_model(question) is by_a_model


@pytest.mark.parametrize(("element", "nouns"), [
    (KNIVES, {"knife"}), (PANS, {"pan"}), (DRINKS, set()), (["a", "b a"], set()),
])
def test_shared_nouns(element: list[str], nouns: set[str]) -> None:
    assert shared_nouns(element) == nouns
