"""A published number gets a verdict beside the run's only where the run used the paper's model."""

from __future__ import annotations

import pytest

from lexicoord.analysis.paper import Measure, Published, comparison_rows, same_model

PAPER = Published(source="IntroPlan Table 2", metric="help_rate", cell={"policy": "conformal", "type": "all"},
                  value=74.5, paper_model="GPT-3.5 (text-davinci-003)")


def measure(model: str) -> Measure:
    return Measure(metric="help_rate", cell={"policy": "conformal", "type": "all"}, model=model, value=70.0, low=60.0,
                   high=80.0, n=40)


@pytest.mark.parametrize(("paper_model", "run_model", "same"), [
    ("PaLM-2L", "local/smollm2-135m", False),
    ("gpt-4o-mini", "openai/gpt-4o-mini", True),
    ("GPT-4o-mini", "openrouter/openai/gpt-4o-mini", True),
    ("GPT-3.5 (text-davinci-003)", "openai/gpt-3.5-turbo", False),
    ("GPT-3.5 (text-davinci-003)", "openai/text-davinci-003", True),
    ("GPT-4 Turbo (gpt-4-1106-preview)", "openai/gpt-4-1106-preview", True),
    ("", "local/smollm2-135m", False),
])
def test_same_model(paper_model: str, run_model: str, same: bool) -> None:
    assert same_model(PAPER.model_copy(update={"paper_model": paper_model}), measure(run_model)) is same


def test_another_models_value_is_shown_without_a_verdict() -> None:
    other = comparison_rows([PAPER], [measure("local/smollm2-135m")], same_model)
    assert other[0][4].startswith("70 [60, 80]") and other[0][6] == "- (another model)"
    mine = PAPER.model_copy(update={"paper_model": "gpt-3.5-turbo"})
    assert comparison_rows([mine], [measure("openai/gpt-3.5-turbo")], same_model)[0][6] == "yes"
    assert comparison_rows([PAPER], [measure("x/y")])[0][6] == "yes"  # without the rule, as before
