"""Comparing two runs: the paired statistics against hand-computed values, and refusals in one sentence."""

import json

import pytest

from lexicoord.analysis.compare import Cost, Outcome, compare, mcnemar, paired_numbers
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination.lineup import dataset_from
from tests.cli.test_cli import lexicoord


def test_exact_mcnemar_on_the_discordant_pairs() -> None:
    pairs = [(True, False)] * 5 + [(False, True)] + [(True, True)] * 3 + [(False, False)] * 2
    # Two-sided binomial of 5 of 6 discordant pairs at one half: 2 * (C(6,5) + C(6,6)) / 2^6 = 14/64.
    assert mcnemar(pairs) == (5, 1, 14 / 64)
    assert mcnemar([(True, True), (False, False)]) == (0, 0, 1.0), "no discordant pair: no evidence of a difference"


def test_paired_numbers_mean_bootstrap_and_wilcoxon() -> None:
    mean, low, high, p = paired_numbers([(1, 2), (2, 4), (3, 3), (4, 7)])
    assert mean == 1.5
    assert 0 <= low <= mean <= high <= 3, "a bootstrap mean lies between the smallest and largest difference"
    # Wilcoxon drops the zero difference; 1, 2, 3 all positive: exact two-sided p = 2 / 2^3.
    assert p == pytest.approx(0.25)
    assert paired_numbers([(5, 5), (2, 2)])[3] is None, "no difference at all: no test"
    assert paired_numbers([(1, 2), (2, 4), (3, 3), (4, 7)]) == (mean, low, high, p), "the same every time (seeded)"


def outcome(item: str, correct: bool | None, rounds: float, variant: str = "v") -> Outcome:
    return Outcome(item=item, cell={"variant": variant}, correct=correct, rounds=rounds)


def test_runs_pair_on_items_within_cells_and_list_their_disagreements() -> None:
    a = [outcome("i1", True, 1), outcome("i2", True, 2), outcome("i3", False, 3), outcome("i4", None, 1),
         outcome("i1", True, 1, "w"), outcome("only-a", True, 1)]
    b = [outcome("i1", False, 2), outcome("i2", True, 2), outcome("i3", True, 4), outcome("i4", None, 3),
         outcome("i1", False, 1, "w"), outcome("i2", True, 1, "w")]
    c = compare("A", "B", "toy", a, b, {"A": Cost(), "B": Cost()})
    rows = {(r.measure, r.cell): r for r in c.rows}
    v = rows[("accuracy (%)", "variant=v")]
    # i1 right -> wrong, i3 wrong -> right, i2 right in both; i4 has no right answer.
    assert (v.pairs, v.a, v.b, v.a_only, v.b_only, v.p) == (3, 200 / 3, 200 / 3, 1, 1, 1.0)
    assert v.low is not None and v.high is not None and v.low <= 0 <= v.high
    every = rows[("accuracy (%)", "all cells")]
    assert (every.pairs, every.a_only, every.b_only) == (4, 2, 1)
    assert rows[("rounds", "variant=v")].difference == pytest.approx((1 + 0 + 1 + 2) / 4)
    assert [(d.item, d.cell, d.a, d.b) for d in c.disagreements] == [
        ("i1", "variant=v", True, False), ("i1", "variant=w", True, False), ("i3", "variant=v", False, True)]
    assert c.unpaired == {"A": 1, "B": 1}


def test_runs_with_no_shared_item_are_refused() -> None:
    with pytest.raises(LexicoordError, match="share no item in the same cell"):
        compare("A", "B", "toy", [outcome("x", True, 1)], [outcome("x", True, 1, "other")], {})


def test_the_command_compares_two_real_runs_and_refuses_mixed_protocols(tmp_path) -> None:
    db = str(tmp_path / "c.db")
    base = ["coordination", "run", "--items", "12", "--db", db, "-a", "lead=sim:intended"]
    lexicoord(*base, "-a", "p=sim:intended", "--run", "same")
    lexicoord(*base, "-a", "p=sim:noisy:0.9", "--bound", "0", "--run", "noisy")
    out = tmp_path / "cmp"
    result = lexicoord("compare", "same", "noisy", "--db", db, "--out", str(out))
    saved = json.loads((out / "comparison.json").read_text())
    [accuracy] = [r for r in saved["rows"] if r["measure"] == "accuracy (%)"]
    scored = sum(1 for i in dataset_from("builtin", 12, None, None) if i.intended)
    assert accuracy["a"] == 100.0 and accuracy["pairs"] == scored < 12, "open items have no right answer"
    assert accuracy["a_only"] == len(saved["disagreements"]) and accuracy["b_only"] == 0
    assert "exact McNemar" in result.stdout and (out / "compare.html").is_file()
    assert "Paired differences" in (out / "compare.html").read_text()
    lexicoord("werewolf", "run", "-m", "scripted/random", "--games", "1", "--players", "6", "--condition", "origin",
              "--run", "ww", "--db", db)
    mixed = lexicoord("compare", "same", "ww", "--db", db, check=False)
    assert mixed.returncode == 1 and "only runs of one protocol compare" in mixed.stderr


def test_two_conditions_compare_across_what_they_change_in_the_cell() -> None:
    """Two conditions of a study that seat other models: the debate's cell names its configuration with the
    models, so no cell is shared, yet the conditions compare (the column the sides never share is the
    treatment); a column both sides share still splits the games."""
    from lexicoord.analysis.compare import compare_independent

    a = [Outcome(item=f"i{n}", cell={"configuration": "Debate(m1)", "task": t}, correct=n % 2 == 0, rounds=2)
         for n in range(6) for t in ("x", "y")]
    b = [Outcome(item=f"i{n}", cell={"configuration": "Debate(m2)", "task": t}, correct=True, rounds=3)
         for n in range(4) for t in ("x", "y")]
    result = compare_independent("s@one", "s@two", "debate", a, b, {})
    accuracy = {r.cell: r for r in result.rows if r.measure.startswith("accuracy")}
    assert set(accuracy) == {"task=x", "task=y", "all cells"}
    assert (accuracy["task=x"].n_a, accuracy["task=x"].n_b) == (6, 4)
    assert accuracy["all cells"].a == 50.0 and accuracy["all cells"].b == 100.0
    assert result.design == "independent" and result.unpaired == {"s@one": 0, "s@two": 0}
    rounds = next(r for r in result.rows if r.measure == "rounds" and r.cell == "all cells")
    assert rounds.difference == 1.0 and rounds.p is not None and rounds.p < 0.01
