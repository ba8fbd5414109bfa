"""A published number gets a verdict beside the run's only where the run used the paper's model, or a model the
experiment file says stands for it."""

from __future__ import annotations

import pytest

from lexicoord.analysis.paper import Measure, Published, comparison_rows, same_model, stored

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
    ("GPT-3.5-Turbo", "OpenAI/GPT-3.5-turbo ", True),
    ("Llama3-8B (leader)", "vllm/meta-llama/Meta-Llama-3-8B-Instruct", False),
    ("", "local/smollm2-135m", True),  # the paper names no model: nothing to mismatch
])
def test_same_model_by_name(paper_model: str, run_model: str, same: bool) -> None:
    assert same_model(PAPER.model_copy(update={"paper_model": paper_model}), measure(run_model)) is same


def test_another_models_value_is_shown_without_a_verdict() -> None:
    other = comparison_rows([PAPER], [measure("local/smollm2-135m")])
    assert other[0][4].startswith("70 [60, 80]") and other[0][6] == "- (another model)"
    mine = PAPER.model_copy(update={"paper_model": "gpt-3.5-turbo"})
    assert comparison_rows([mine], [measure("openai/gpt-3.5-turbo")])[0][6] == "yes"
    no_interval = measure("local/smollm2-135m").model_copy(update={"low": None, "high": None})
    assert comparison_rows([PAPER], [no_interval])[0][6] == "", "no interval, nothing to judge either way"


def test_a_model_the_file_names_as_the_papers_stand_in_gets_the_verdict() -> None:
    published = [{"source": "Figure 2", "metric": "help_rate", "cell": {"policy": "conformal", "type": "all"},
                  "value": 74.5, "paper_model": name} for name in ("Llama3-8B (leader)", "Gemma2-9B", "Mistral-7B")]
    config = {"published": published, "paper_models": {
        "llama3-8b": ["vllm/meta-llama/Meta-Llama-3-8B-Instruct", "ollama/llama3:8b"],
        "Gemma2-9B": "ollama/gemma2:9b",
        "Mistral-7B": "",  # an unset ${VAR:-}: stands for nothing
    }}
    numbers = stored(config)
    llama, gemma, mistral = numbers
    assert same_model(llama, measure("vllm/meta-llama/Meta-Llama-3-8B-Instruct"))
    assert same_model(llama, measure("ollama/llama3:8b"))
    assert not same_model(llama, measure("ollama/gemma2:9b")), "a stand-in stands for its own paper model only"
    assert same_model(gemma, measure("ollama/gemma2:9b"))
    assert not same_model(mistral, measure("local/smollm2-135m"))
    rows = comparison_rows(numbers, [measure("ollama/llama3:8b"), measure("local/smollm2-135m")])
    assert [r[6] for r in rows[:2]] == ["yes", "- (another model)"]
    assert not same_model(stored({"published": published})[0],
                      measure("vllm/meta-llama/Meta-Llama-3-8B-Instruct")), "no mapping, no verdict"
