"""Each benchmark's success rule on verdicts as the gate writes them, and the set overlap."""

from __future__ import annotations

from typing import Any

import pytest

from lexicoord.gate.evaluation.scoring import ambik_success, knowno_success, overlap

OPTIONS = ["pick up the Coke and bring it to the person", "pick up the RedBull and bring it to the person",
           "pick up the Pepsi and bring it to the person"]
AMBIGUOUS = {"intended": [OPTIONS[1]], "ambiguous": True}
CLEAR = {"intended": [OPTIONS[1]], "ambiguous": False}
MULTI = {"intended": [OPTIONS[0], OPTIONS[2]], "ambiguous": False}


def said(choice: str | None = None, text: str | None = None, refused: bool = False) -> dict[str, Any]:
    return {"question": "Which?", "choice": choice, "text": text, "refused": refused}


@pytest.mark.parametrize(("outcome", "gold", "success"), [
    ({"status": "clear", "interpretation": OPTIONS[1]}, AMBIGUOUS, 1.0),
    ({"status": "clear", "interpretation": OPTIONS[0]}, AMBIGUOUS, 0.0),
    ({"status": "clear", "interpretation": "PICK UP THE REDBULL AND BRING IT TO THE PERSON."}, AMBIGUOUS, 1.0),
    ({"status": "clear", "interpretation": OPTIONS[2]}, MULTI, 1.0),
    # the instruction itself, no question: right only when the benchmark says it has no unmeant reading
    ({"status": "clear", "interpretation": "Bring me that drink."}, AMBIGUOUS, 0.0),
    ({"status": "clear", "interpretation": "Bring me the RedBull."}, CLEAR, 1.0),
    ({"status": "clear", "interpretation": "Bring me a cola.", "clarifications": []}, MULTI, 1.0),
    # after a question: the option the person chose, or their words
    ({"status": "clear", "interpretation": "Bring me that drink. (clarified: ...)",
      "clarifications": [said(choice=OPTIONS[1])]}, AMBIGUOUS, 1.0),
    ({"status": "clear", "interpretation": "Bring me that drink. (clarified: ...)",
      "clarifications": [said(choice=OPTIONS[0])]}, AMBIGUOUS, 0.0),
    # words only: the help counts when the question was about the element, else the instruction stands
    ({"status": "clear", "interpretation": "Bring me that drink. (clarified: the energy drink)",
      "clarifications": [said(text="I mean: the RedBull")]}, AMBIGUOUS, 0.0),
    # the robot did nothing: never a success
    ({"status": "refuse", "interpretation": None, "clarifications": [said(choice=OPTIONS[1])]}, AMBIGUOUS, 0.0),
    ({"status": "error"}, CLEAR, 0.0),
    ({}, CLEAR, 0.0),
])
def test_knowno_success(outcome: dict[str, Any], gold: dict[str, Any], success: float) -> None:
    assert knowno_success(outcome, gold, OPTIONS) == success


def test_a_free_answer_counts_when_the_question_was_about_the_element() -> None:
    outcome = {"status": "clear", "interpretation": "Bring me that drink. (clarified: I mean: the RedBull)",
               "clarifications": [{"question": "Which drink, the Coke or the RedBull?", "text": "I mean: the RedBull"},
                                  {"question": "Anything else?", "refused": True}]}
    assert knowno_success(outcome, AMBIGUOUS, OPTIONS, about=lambda q: "RedBull" in q) == 1.0
    assert knowno_success(outcome, AMBIGUOUS, OPTIONS, about=lambda q: False) == 0.0


PAN = {"intent_elements": ["frying pan"]}
BOWL = {"intent_elements": ["ceramic bowl", "-metal bowl"]}


@pytest.mark.parametrize(("outcome", "gold", "success"), [
    ({"status": "clear", "interpretation": "Cook two slices of bacon."}, PAN, 0.0),
    ({"status": "clear", "interpretation": "Use the frying pan to cook two slices of bacon."}, PAN, 1.0),
    # the person's words are not the robot's unless the help counts (below)
    ({"status": "clear", "interpretation": "Cook two slices of bacon. (clarified: Use the frying pan.)",
      "clarifications": [said(text="Use the frying pan.")]}, PAN, 0.0),
    ({"status": "clear", "interpretation": "Cook two slices of bacon. (clarified: frying pan)",
      "clarifications": [said(choice="frying pan", text="Use the frying pan.")]}, PAN, 1.0),
    ({"status": "clear", "interpretation": "Frying pan"}, PAN, 1.0),
    ({"status": "clear", "interpretation": "Heat the soup in a bowl."}, BOWL, 0.5),
    ({"status": "clear", "interpretation": "Heat the soup in the metal bowl."}, BOWL, 0.0),
    ({"status": "refuse", "interpretation": "Use the frying pan."}, PAN, 0.0),
])
def test_ambik_success(outcome: dict[str, Any], gold: dict[str, Any], success: float) -> None:
    assert ambik_success(outcome, gold) == pytest.approx(success)


def test_ambik_help_in_words_counts_only_for_a_question_about_the_element() -> None:
    outcome = {"status": "clear", "interpretation": "Cook two slices of bacon. (clarified: Use the frying pan.)",
               "clarifications": [{"question": "Which pan should I use?", "text": "Use the frying pan."}]}
    assert ambik_success(outcome, PAN, about=lambda q: "pan" in q) == 1.0
    assert ambik_success(outcome, PAN, about=lambda q: False) == 0.0


@pytest.mark.parametrize(("kept", "target", "iou"), [
    (["a", "b"], ["a", "b"], 1.0), (["a"], ["a", "b"], 0.5), (["A."], ["a", "b", "c"], 1 / 3), ([], ["a"], 0.0),
    (["c"], ["a", "b"], 0.0), ([], [], 0.0),
])
def test_set_overlap_is_intersection_over_union(kept: list[str], target: list[str], iou: float) -> None:
    assert overlap(kept, target) == pytest.approx(iou)
