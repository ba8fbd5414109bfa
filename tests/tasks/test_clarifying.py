"""The scoring rule: which slot a clarifying question asks about, on generated items and on a user's own."""

import pytest

from lexicoord.tasks.clarifying import classify
from lexicoord.tasks.instructions import generated_instructions, question_kind, rule_success

AMBIGUOUS = [i.as_task() for i in generated_instructions(20, seed=0) if i.ambiguous]


def item(subtype: str, vague: str | None = None, colour: str | None = None) -> dict:
    """A generated ambiguous instruction of ``subtype`` (with that vague term, of that colour)."""
    return next(i for i in AMBIGUOUS if i["subtype"] == subtype and (vague is None or i["slot"]["vague"] == vague)
                and (colour is None or i["slot"]["precise"] == colour))


def kind(it: dict, question: str) -> str | None:
    return question_kind(it, "ambiguous", question)


SHOTGUN = "How many blocks, what colour, and where exactly?"


@pytest.mark.parametrize("subtype, vague, colour, question", [
    ("quantity", "a number of", None, "Should I move a number of red blocks?"),  # echoes the vague term
    ("noun", "item", None, "Which item should I move?"),
    ("noun", "object", None, "Which object do you mean?"),
    ("quantity", None, None, "Which of the three red blocks should I move?"),  # a count of something else
    ("quantity", None, None, "Which one should I move first?"),
    ("relation", None, None, "Is that right?"),
    ("colour", None, "green", "Which sea green block?"),
    ("colour", None, None, "Which block, the one closest to you?"),
    ("relation", "next to", None, "Should I put them next to the bowl?"),
    ("quantity", None, None, "Where exactly should I put them?"),
    ("quantity", None, None, ""),
])
def test_questions_that_do_not_ask_about_the_slot_fail(subtype, vague, colour, question) -> None:
    it = item(subtype, vague, colour)
    assert rule_success(it, "ambiguous", question) is False, (it["instruction"], question)
    assert kind(it, question) in ("other", "none")


@pytest.mark.parametrize("subtype", ["quantity", "noun", "colour", "relation"])
def test_a_question_about_everything_at_once_is_a_shotgun_not_a_success(subtype) -> None:
    it = item(subtype)
    assert kind(it, SHOTGUN) == "shotgun"
    assert rule_success(it, "ambiguous", SHOTGUN) is False
    assert kind(it, "How many red blocks should I move, and where exactly?") == "shotgun"


@pytest.mark.parametrize("subtype, vague, colour, question", [
    ("quantity", None, None, "How many red blocks should I move?"),
    ("quantity", "a few", None, "What do you mean by 'a few'?"),
    ("quantity", None, None, "Should I move two or three of them?"),
    ("quantity", None, None, "Should I move just one?"),
    ("quantity", None, None, "Do you want all of them moved?"),
    ("quantity", None, None, "Should I move all three red blocks, or fewer?"),
    ("quantity", "a number of", None, "Exactly what number of blocks do you want?"),
    ("noun", None, None, "Do you want a block or the bowl?"),
    ("noun", None, None, "Is the red item a block or a bowl?"),
    ("noun", "thing", None, "What do you mean by 'thing': a block or the bowl?"),
    ("noun", None, None, "What kind of object should I move?"),
    ("noun", None, None, "Do you mean one of the blocks or the bowls?"),
    ("colour", None, None, "Which colour do you mean: red, yellow or green?"),
    ("colour", "jade", "green", "Does jade mean green?"),
    ("colour", None, "green", "Do you mean the green block?"),
    ("colour", None, None, "Is that the yellow block or the green one?"),
    ("colour", None, None, "What shade exactly?"),
    ("relation", None, None, "Where exactly should the blocks go: to the left or the right of the bowl?"),
    ("relation", "next to", None, "In or next to it?"),
    ("relation", "next to", None, "Should I put them in the bowl or next to it?"),
    ("relation", "near", None, "How close to the bowl do you mean by near?"),
    ("relation", None, None, "Which side of it should they go on?"),
    ("relation", None, None, "Should they go on top of it or beside it?"),
])
def test_good_questions_for_each_slot_succeed(subtype, vague, colour, question) -> None:
    it = item(subtype, vague, colour)
    assert kind(it, question) == "slot", (it["instruction"], question)
    assert rule_success(it, "ambiguous", question) is True


def test_a_repeated_precise_part_of_the_instruction_does_not_make_a_shotgun() -> None:
    relation = next(i for i in AMBIGUOUS if i["subtype"] == "relation" and "three" in i["instruction"])
    assert kind(relation, "Should I put all three red blocks in the bowl or beside it?") == "slot"


def test_a_users_own_slot_is_read_by_its_cues_whatever_the_wording() -> None:
    own = {"ambiguous": True, "slot": {"name": "object", "vague": "the cup", "ask_about": "which cup",
                                       "cues": ["the red cup", "which cups"]}}
    assert kind(own, "Do you mean a red cup?") == "slot", "'a' against 'the'"
    assert kind(own, "Which cup do you mean?") == "slot", "plural against singular"
    assert kind(own, "Do you mean the cup?") == "none", "an echo of the vague term asks nothing"
    assert kind(own, "Which cup, and how many?") == "shotgun"
    assert kind(own, "Where is it?") == "other"
    assert question_kind({"ambiguous": True, "slot": {"name": "object", "vague": "x", "ask_about": "y", "cues": []}},
                         "ambiguous", "Which?") is None, "no cues and an unknown slot: nothing to judge by"


def test_the_verdict_is_read_before_the_question() -> None:
    it = item("quantity")
    assert question_kind(it, "clear", "") == "none" and rule_success(it, "clear", "") is False
    assert question_kind(it, None, "How many?") == "none", "an unreadable verdict is no question"
    assert classify("", it["slot"]) == "none"
