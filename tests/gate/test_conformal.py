"""KnowNo's pieces: letters read as models write them, the split-conformal quantile as KnowNo computes it."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.gate.conformal import letter_of, normalised, prediction_set, quantile

TOKENS = [("A", "A"), (" A", "A"), ("B)", "B"), ("(c", "C"), ("**D**", "D"), ("e.", "E"), (" b:", "B"), ("[A]", "A"),
          ("Answer", None), ("AB", None), ("1", None), ("", None), (" ", None), ("é", None), ("The", None)]


@pytest.mark.parametrize(("token", "letter"), TOKENS)
def test_letters_as_models_spell_them(token: str, letter: str | None) -> None:
    assert letter_of(token) == letter


def test_spellings_of_one_letter_add_up_and_other_tokens_are_ignored() -> None:
    lp = {"A": math.log(0.3), " A": math.log(0.1), "B": math.log(0.2), "The": math.log(0.35), "C": math.log(0.05)}
    probs = normalised(lp, "AB")
    assert probs["A"] == pytest.approx(0.4 / 0.6) and probs["B"] == pytest.approx(0.2 / 0.6)
    with pytest.raises(LexicoordError, match="none of the option letters"):
        normalised({"The": -0.1, "Sure": -2.0}, "AB")


def test_the_set_keeps_what_is_within_the_threshold_most_probable_first() -> None:
    probs = {"left": 0.55, "right": 0.40, "neither": 0.05}
    assert prediction_set(probs, 0.2) == []
    assert prediction_set(probs, 0.5) == ["left"]
    assert prediction_set(probs, 0.7) == ["left", "right"]
    assert prediction_set(probs, 1.0) == ["left", "right", "neither"]


@pytest.mark.parametrize("n", [9, 20, 57, 200])
@pytest.mark.parametrize("success", [0.8, 0.9, 0.95])
def test_quantile_is_knownos_higher_quantile(n: int, success: float) -> None:
    rng = random.Random(n)
    scores = [rng.random() for _ in range(n)]
    level = math.ceil((n + 1) * success) / n
    if level > 1:
        with pytest.raises(ConfigError, match="at least"):
            quantile(scores, success)
        return
    assert quantile(scores, success) == float(np.quantile(scores, level, method="higher"))
    # the order of the calibration items does not matter
    rng.shuffle(scores)
    assert quantile(scores, success) == float(np.quantile(scores, level, method="higher"))


def test_coverage_on_exchangeable_items_is_at_least_the_target() -> None:
    rng = random.Random(7)
    hits = 0
    for _ in range(300):
        calibration = [rng.random() for _ in range(50)]
        qhat = quantile(calibration, 0.9)
        hits += rng.random() <= qhat  # a new item's score, drawn like the calibration ones
    assert hits / 300 >= 0.85
