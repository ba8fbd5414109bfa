"""The metrics against tables computed by hand, including an empty set and one where every item is ambiguous."""

from __future__ import annotations

from typing import Any

import pytest

from lexicoord.gate.evaluation.metrics import ALL, cell, cells
from lexicoord.gate.evaluation.scoring import Scored


def s(policy: str = "single", *, amb: bool, asked: bool, success: float, category: str = "t", status: str = "clear",
      overlap: float | None = None, rule: bool | None = None, judge: bool | None = None, judged_by: str | None = None,
      calls: int = 1, tokens: int = 100, seconds: float = 1.0, size: int | None = None) -> Scored:
    return Scored(item_id=f"i{id(object())}", policy=policy, benchmark="knowno", category=category, ambiguous=amb,
                  status=status, asked=asked, success=success, set_overlap=overlap, set_size=size, question="Which?" if asked else None,
                  about_rule=rule, about_judge=judge, judge=judged_by, model_calls=calls, tokens=tokens,
                  latency_s=seconds)


def values(c: Any) -> dict[str, float]:
    return {k: round(m.value, 4) for k, m in c.measures.items()}


def test_a_mixed_set_by_hand() -> None:
    rows = [
        s(amb=True, asked=True, success=1, rule=True, calls=2, tokens=300, seconds=3.0),
        s(amb=True, asked=True, success=0, rule=False, status="refuse", calls=2, tokens=250, seconds=2.0),
        s(amb=True, asked=False, success=0, calls=1, tokens=100, seconds=1.0),
        s(amb=False, asked=True, success=1, rule=None, calls=2, tokens=200, seconds=2.0),
        s(amb=False, asked=False, success=1, calls=1, tokens=150, seconds=1.0),
    ]
    c = cell("single", ALL, rows)
    assert (c.checks, c.ambiguous) == (5, 3)
    got = values(c)
    # success 3/5; help 3/5; correct help 2/3; false alarms 1/2; question on the element 1/2 (ambiguous that asked)
    assert got["success_rate"] == 60.0 and c.measures["success_rate"].n == 5
    assert got["help_rate"] == 60.0
    assert got["correct_help_rate"] == round(200 / 3, 4) and c.measures["correct_help_rate"].n == 3
    assert got["false_alarm_rate"] == 50.0 and c.measures["false_alarm_rate"].n == 2
    assert got["question_about_element_rule"] == 50.0 and c.measures["question_about_element_rule"].n == 2
    assert got["error_rate"] == 0.0
    assert got["model_calls"] == 1.6 and got["tokens"] == 200.0 and got["seconds"] == 1.8
    assert "set_size_correctness" not in got and "set_size" not in got and "question_about_element_judge" not in got
    # Wilson 95% for 3/5, as scipy and the tables give it
    assert c.measures["success_rate"].low == pytest.approx(23.07, abs=0.01)
    assert c.measures["success_rate"].high == pytest.approx(88.24, abs=0.01)


def test_an_empty_set_has_no_numbers() -> None:
    c = cell("single", ALL, [])
    assert c.checks == 0 and c.measures == {}
    assert cells([]) == []


def test_an_all_ambiguous_set_has_no_false_alarm_rate() -> None:
    rows = [s(amb=True, asked=True, success=1, rule=True), s(amb=True, asked=True, success=1, rule=True),
            s(amb=True, asked=False, success=0)]
    got = values(cell("debate", ALL, rows))
    assert "false_alarm_rate" not in got
    assert got["correct_help_rate"] == round(200 / 3, 4) and got["help_rate"] == round(200 / 3, 4)
    assert got["question_about_element_rule"] == 100.0


def test_an_all_clear_set_has_no_correct_help_rate() -> None:
    got = values(cell("single", ALL, [s(amb=False, asked=False, success=1), s(amb=False, asked=True, success=1)]))
    assert "correct_help_rate" not in got and got["false_alarm_rate"] == 50.0 and got["success_rate"] == 100.0


def test_partial_successes_are_a_mean_with_a_bootstrap_interval() -> None:
    rows = [s(amb=True, asked=False, success=0.5), s(amb=True, asked=True, success=1.0),
            s(amb=False, asked=False, success=0.0), s(amb=False, asked=False, success=1.0)]
    m = cell("single", ALL, rows).measures["success_rate"]
    assert m.value == pytest.approx(62.5) and m.n == 4
    assert m.low is not None and m.high is not None and 0.0 <= m.low < 62.5 < m.high <= 100.0
    assert (m.low, m.high) == (cell("single", ALL, rows).measures["success_rate"].low,
                               cell("single", ALL, rows).measures["success_rate"].high)  # seeded: the same each time


def test_set_size_correctness_is_the_mean_overlap_over_ambiguous_items_with_a_set() -> None:
    rows = [s(amb=True, asked=True, success=1, overlap=1.0, size=2), s(amb=True, asked=True, success=1, overlap=0.5, size=3),
            s(amb=True, asked=False, success=0, overlap=None, size=1), s(amb=False, asked=False, success=1, size=1)]
    made = cell("conformal", ALL, rows).measures
    m = made["set_size_correctness"]
    assert m.value == pytest.approx(75.0) and m.n == 2
    # KnowNo's set size: the mean over every check that scored a set, not a percentage
    assert made["set_size"].value == pytest.approx(7 / 4) and made["set_size"].n == 4


def test_the_judges_share_leaves_unreadable_verdicts_out_and_counts_them() -> None:
    rows = [s(amb=True, asked=True, success=1, judge=True, judged_by="m"),
            s(amb=True, asked=True, success=1, judge=False, judged_by="m"),
            s(amb=True, asked=True, success=1, judge=None, judged_by="m"),
            s(amb=True, asked=True, success=1)]
    c = cell("single", ALL, rows)
    assert c.measures["question_about_element_judge"].value == 50.0 and c.measures["question_about_element_judge"].n == 2
    assert c.unreadable_judgements == 1 and c.judges == ["m"]


def test_errors_count_against_success_and_are_counted() -> None:
    got = values(cell("single", ALL, [s(amb=True, asked=False, success=0, status="error"),
                                      s(amb=False, asked=False, success=1)]))
    assert got["error_rate"] == 50.0 and got["success_rate"] == 50.0


def test_cells_give_every_policy_overall_then_by_type_whatever_the_row_order() -> None:
    rows = [s("debate", amb=True, asked=True, success=1, category="b"),
            s("single", amb=False, asked=False, success=1, category="a"),
            s("single", amb=True, asked=False, success=0, category="b")]
    made = cells(rows)
    assert [(c.policy, c.category, c.checks) for c in made] == [
        ("debate", ALL, 1), ("single", ALL, 2), ("single", "a", 1), ("debate", "b", 1), ("single", "b", 1)]
    shuffled = cells(list(reversed(rows)))
    assert {(c.policy, c.category, c.checks) for c in shuffled} == {(c.policy, c.category, c.checks) for c in made}


def test_a_mean_of_partial_successes_that_comes_out_whole_is_still_shown_as_a_mean() -> None:
    from lexicoord.gate.evaluation.report import tables

    rows = [s(amb=True, asked=False, success=0.5), s(amb=True, asked=False, success=0.5),
            s(amb=False, asked=False, success=1.0), s(amb=False, asked=False, success=0.0)]
    c = cell("single", ALL, rows)
    assert "success_rate" in c.means and c.measures["success_rate"].value == 50.0
    shown = tables([c])[0].rows[0][2]
    assert shown.endswith("n=4") and "2/4" not in shown
    binary = cell("single", ALL, [s(amb=True, asked=False, success=1.0), s(amb=False, asked=False, success=0.0)])
    assert "success_rate" not in binary.means and tables([binary])[0].rows[0][2].endswith("1/2")
