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


def generated(instruction: str) -> dict:
    """The generated ambiguous instruction with exactly this text (seed 0, 20 pairs per type)."""
    [it] = [i for i in AMBIGUOUS if i["instruction"] == instruction]
    return it


def own(instruction: str, name: str, vague: str, cues: list[str]) -> dict:
    return {"ambiguous": True, "instruction": instruction,
            "slot": {"name": name, "vague": vague, "ask_about": "the vague part", "cues": cues}}


# Questions about the object the instruction names precisely as its reference ("the green bowl", "a red block")
# ask nothing about the vague slot, whatever cue words they hold ("where", "how many", a colour, "bowl or block");
# the same slot asked about beside the reference still counts.
REFERENCE_TRAPS = [
    # quantity: "several" is vague; "the green bowl" is named precisely
    ("Put several red blocks to the left of the green bowl.", "Which green bowl?", "none"),
    ("Put several red blocks to the left of the green bowl.", "To the left of the green bowl, right?", "none"),
    ("Put several red blocks to the left of the green bowl.", "How many green bowls are there?", "none"),
    ("Put several red blocks to the left of the green bowl.", "Is there just one green bowl?", "none"),
    ("Put several red blocks to the left of the green bowl.", "Which green bowl? There's only one, right?", "none"),
    ("Put several red blocks to the left of the green bowl.", "Where is the green bowl?", "none"),
    ("Put several red blocks to the left of the green bowl.", "How many red blocks, and where is the green bowl?",
     "slot"),
    ("Put several red blocks to the left of the green bowl.",
     "How many red blocks should go to the left of the green bowl?", "slot"),
    ("Put several red blocks to the left of the green bowl.",
     "Do you want all three red blocks left of the green bowl, or just two?", "slot"),
    # the issue's own example, as a user would write the line
    (None, "Which green bowl?", "none"),
    (None, "Into the green bowl, right?", "none"),
    (None, "Where’s the green bowl?", "none"),
    (None, "How many of the red blocks go in the green bowl?", "slot"),
    # noun: "item" is vague (a red block or the red bowl); "the green bowl" / "a green block" is the reference
    ("Put one red item behind the green bowl.", "Should it go behind the green bowl or the green block?", "none"),
    ("Put one red item behind the green bowl.", "Do you mean the green bowl?", "none"),
    ("Put one red item behind the green bowl.", "Is the red item a block, or the red bowl?", "slot"),
    ("Set one yellow article to the left of a green block.", "Do you mean the green bowl or a green block?", "none"),
    ("Set one yellow article to the left of a green block.", "A yellow block or the yellow bowl?", "slot"),
    # colour: "amber" is vague; the bowls' colours describe bowls, not the block
    ("Move one amber block on the red bowl.", "Do you mean the red bowl?", "none"),
    ("Move one amber block on the red bowl.", "On the red bowl, right?", "none"),
    ("Move one amber block on the red bowl.", "Is it the red bowl or the green bowl?", "none"),
    ("Move one cherry-colored block in front of the yellow bowl.", "Do you mean the yellow bowl?", "none"),
    ("Move one amber block on the red bowl.", "Is amber yellow or orange here?", "slot"),
    ("Move one amber block on the red bowl.", "Do you mean a yellow block, to put on the red bowl?", "slot"),
    # relation: "near" / "lateral to" is vague; where the reference itself stands is not where the blocks go
    ("Put three red blocks near the yellow bowl.", "Where is the yellow bowl?", "none"),
    ("Put three red blocks near the yellow bowl.", "WHERE'S THE YELLOW BOWL??", "none"),
    ("Put three red blocks near the yellow bowl.", "Which side of the table is the yellow bowl on?", "none"),
    ("Put three red blocks near the yellow bowl.", "Is the yellow bowl on the left or the right?", "none"),
    ("Place all the red blocks near a green block.", "Where are the green blocks?", "none"),
    ("Put three red blocks near the yellow bowl.", "Where is the yellow bowl, and which side of it should they go?",
     "slot"),
    ("Put three red blocks near the yellow bowl.", "How close to the yellow bowl should they be?", "slot"),
    ("Place one red block lateral to the yellow bowl.", "Left or right of the yellow bowl?", "slot"),
    # a user's own slot, scored by its cues: "blue" is a cue for the cup, not for the blue table it goes to
    ("Bring the cup to the blue table.", "Which blue table?", "none"),
    ("Bring the cup to the blue table.", "Is the blue table the one by the window?", "none"),
    ("Bring the cup to the blue table.", "The red cup or the blue one?", "slot"),
]
ISSUE_ITEM = own("Put a few red blocks in the green bowl.", "quantity", "a few", ["how many", "number of"])
CUP_ITEM = own("Bring the cup to the blue table.", "object", "the cup", ["which cup", "red", "blue"])


@pytest.mark.parametrize("instruction, question, expected", REFERENCE_TRAPS)
def test_a_question_about_the_precisely_named_reference_is_not_about_the_slot(instruction, question, expected) -> None:
    it = ISSUE_ITEM if instruction is None else CUP_ITEM if "cup" in instruction else generated(instruction)
    assert kind(it, question) == expected, (it["instruction"], question)
    assert rule_success(it, "ambiguous", question) is (expected == "slot")
