"""Coining: a table of candidates, each accepted or rejected with the reason the rules give."""

import pytest

from lexicoord.core.audience import Viewer
from lexicoord.lexicon import Board, Provenance, judge_turn, read_declared_terms, read_turn
from lexicoord.lexicon.coining import CoiningRules

TASK = "Josh buys 3 pens at 2 dollars each. How much does he pay in total?"
REASONING = ("[PART 1] Let unitcost be the price per pen, so the josh total is 3 x unitcost. "
             "The core lock holds: P10 is not P1.\n")


def judge(part2: str, *, part1: str = REASONING, board: Board | None = None, rules: CoiningRules | None = None,
          extra: str = ""):
    turn = read_turn(f"{part1}[PART 2]\n{part2}\n{extra}", rules)
    return [(c.term, c.reason) for c in judge_turn(turn, coiner="A", board=board or Board(), viewer=Viewer(name="A"),
                                                   task_text=TASK, rules=rules)]


@pytest.mark.parametrize("line,reason", [
    ("- unitcost = the price of one pen", None),
    ("1. core lock = the agreed binding of P10", None),  # a phrase of ordinary words is a coinage
    ("* **unitcost** = price of one pen", None),  # markdown around the term is not part of it
    ("P10 = the tenth player", None),
    ("unitcost: the price of one pen", "bad_form"),  # no '='
    ("unitcost =", "bad_form"),  # no definition
    ("the cost that we pay for each single pen bought = x", "bad_form"),  # not a term: too many words
    ("answer = the result", "blocklisted"),
    ("pens = writing tools", "task_word"),  # the task's own word
    ("josh = the buyer", "task_word"),  # case-insensitive
    ("lock = a binding", "dictionary_word"),
    ("speedtime = distance over time", "not_used"),  # defined, never used in PART 1
])
def test_each_candidate_gets_its_verdict(line: str, reason: str | None) -> None:
    [(_, got)] = judge(line)
    assert got == reason


def test_a_term_already_on_a_visible_board_is_not_new_and_a_repeat_is_a_duplicate() -> None:
    board = Board()
    board.coin("unitcost", "price per pen", Provenance(agent="A", round=1))
    assert judge("unitcost = price per pen", board=board) == [("unitcost", "on_board")]
    hidden = Board()
    hidden.coin("unitcost", "price per pen", Provenance(agent="B", round=1))  # B's, private: A cannot see it
    assert judge("unitcost = price per pen", board=hidden) == [("unitcost", None)]
    assert judge("unitcost = price\nUnitCost = again") == [("unitcost", None), ("UnitCost", "duplicate")]


def test_a_turn_that_breaks_the_format_loses_every_candidate() -> None:
    assert judge("unitcost = price", part1=REASONING + "#### 6\n") == [("unitcost", "final_answer_marker")]
    assert judge("unitcost = price", part1=REASONING + "The answer is 6.\n") == [("unitcost", "final_answer_marker")]
    assert judge("unitcost = price\n#### 6") == [("unitcost", "final_answer_marker"), ("#### 6", "bad_form")]
    assert judge("unitcost = price", extra="[PART 3] summary") == [("unitcost", "part_three")]


def test_rules_are_settings() -> None:
    lenient = CoiningRules(dictionary=False, blocklist=frozenset())
    assert judge("lock = a binding", rules=lenient) == [("lock", None)], "used as a word in 'core lock holds'"
    assert judge("answer = the result", rules=lenient) == [("answer", "not_used")]


def test_parts_are_read_whatever_the_header_style() -> None:
    turn = read_turn("**Part 1:** uses zorp here.\n\n## PART 2\n- zorp = a made-up unit\n")
    assert turn.part1.startswith("uses zorp") and [c.term for c in turn.candidates] == ["zorp"]
    assert not turn.part3 and turn.marker is None


@pytest.mark.parametrize("text", [
    "[PART 1] the zorp holds here. [PART 2] zorp = a made-up unit",  # both parts on one line
    "The zorp holds here.\n[PART 2]\nzorp = a made-up unit",  # reasoning before PART 2, without a header
])
def test_parts_written_on_one_line_or_without_a_first_header_are_read(text: str) -> None:
    turn = read_turn(text)
    assert "zorp holds" in turn.part1 and [c.term for c in turn.candidates] == ["zorp"]


@pytest.mark.parametrize("reply,declared", [
    ("NEW TERM: unitcost = the price of one pen\nSo 3 x unitcost = 6.\n#### 6", [("unitcost", "the price of one pen")]),
    ("**New term:** unitcost = price of one pen\nThe unitcost is 2.", [("unitcost", "price of one pen")]),
    ("- new term - unitcost = price of one pen\n- NEW TERM: penset = the three pens\n3 x unitcost",
     [("unitcost", "price of one pen"), ("penset", "the three pens")]),
    ("  New-Term: `unitcost` = price per pen", [("unitcost", "price per pen")]),
    ("NEW TERM: unitcost", [("unitcost", "")]),  # no '=': a candidate of bad form, still recorded
    ("New terms could help here, but 3 x 2 = 6.\n#### 6", []),  # prose about terms, and an equation
    ("unitcost = the price of one pen\nANSWER: 6", []),  # a definition not declared as the prompt asks
    ("I used the new term: unitcost = price before.", []),  # not a line that declares
])
def test_terms_declared_in_a_public_turn_are_read_from_their_lines_only(reply: str, declared) -> None:
    turn = read_declared_terms(reply)
    assert [(c.term, c.definition) for c in turn.candidates] == declared
    assert all(f"{t} = {d}" not in turn.part1 for t, d in declared if d), "the declaring lines are not the reasoning"


def test_a_declared_term_is_judged_by_the_coining_rules_but_not_the_marker_rule() -> None:
    turn = read_declared_terms("NEW TERM: unitcost = price of one pen\nNEW TERM: penset = three pens\n"
                               "3 x unitcost = 6.\nThe answer is 6.")
    verdicts = [(c.term, c.reason) for c in judge_turn(turn, coiner="A", board=Board(), viewer=Viewer(name="A"),
                                                       task_text=TASK)]
    assert verdicts == [("unitcost", None), ("penset", "not_used")]


@pytest.mark.parametrize("text,said", [
    ("Hi all. [PART 1] Bob is lying about the zorp.\n[PART 2]\nzorp = a made-up unit", "Hi all. Bob is lying"),
    ("I think Bob is lying.\n[PART 1] The zorp points at him.\n[PART 2]\nzorp = a made-up unit",
     "I think Bob is lying.\nThe zorp points"),
    ("Good morning everyone!\n\n**Part 1:** the zorp holds.\n**Part 2:**\n- zorp = a made-up unit",
     "Good morning everyone!\nthe zorp holds"),
    ("ok so. [part 1] zorp here [part 2] zorp = a made-up unit", "ok so. zorp here"),
])
def test_words_written_before_the_first_header_stay_in_part_one(text: str, said: str) -> None:
    """People and models often greet or react before the header; those words are part of what they said."""
    turn = read_turn(text)
    assert turn.part1.startswith(said), turn.part1
    assert [c.term for c in turn.candidates] == ["zorp"] and not turn.part3


def test_a_turn_that_starts_with_its_header_is_read_as_before() -> None:
    turn = read_turn("[PART 1] the zorp holds.\n[PART 2]\nzorp = a made-up unit")
    assert turn.part1 == "the zorp holds." and turn.part2 == "zorp = a made-up unit"
