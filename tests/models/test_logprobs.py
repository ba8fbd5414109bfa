"""The first token's log-probabilities through the model layer: the embedded model, a server, a script, the cache."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lexicoord.errors import ModelError
from lexicoord.models import ResponseCache, get_model
from lexicoord.models.providers.openai_compat import _first_token_logprobs
from lexicoord.models.providers.scripted import register_script

QUESTION = "Which is a fruit?\nA) a hammer\nB) an apple\nC) a car\nAnswer with the letter only."


def _sane(top: dict[str, float] | None, k: int) -> dict[str, float]:
    assert top is not None and 0 < len(top) <= k
    assert all(v <= 0 for v in top.values()) and sum(math.exp(v) for v in top.values()) <= 1 + 1e-6
    return top


@pytest.mark.embedded
async def test_the_embedded_model_gives_the_first_tokens_odds_and_greedy_takes_the_likeliest() -> None:
    model = get_model("local/smollm2-135m", cache=False)
    out = await model.generate(QUESTION, logprobs=5, max_tokens=1, temperature=0)
    top = _sane(out.top_logprobs, 5)
    assert len(top) == 5
    assert out.text == max(top, key=lambda t: top[t])  # temperature 0 takes the most likely token
    plain = await model.generate(QUESTION, max_tokens=1, temperature=0)
    assert plain.top_logprobs is None and plain.text == out.text  # asking for the odds changes nothing else


@pytest.mark.embedded
async def test_an_openai_compatible_server_gives_them(llama_server: str) -> None:
    model = get_model("llamacpp/smollm2", cache=False, base_url=llama_server)
    out = await model.generate(QUESTION, logprobs=3, max_tokens=1, temperature=0)
    top = _sane(out.top_logprobs, 3)
    assert out.text == max(top, key=lambda t: top[t])


BODIES = [
    ({"message": {"content": "A"}}, None),
    ({"logprobs": None}, None),
    ({"logprobs": {"content": []}}, None),
    ({"logprobs": {"content": [{"token": "A", "logprob": -0.1}]}}, None),
    ({"logprobs": {"content": [{"token": "A", "top_logprobs": [{"token": "A", "logprob": -0.1},
                                                                {"token": " A", "logprob": "-2.5"}]}]}},
     {"A": -0.1, " A": -2.5}),
    ({"logprobs": {"content": [{"top_logprobs": [{"token": "B", "logprob": -1}, {"token": "B", "logprob": -3}]}]}},
     {"B": -1.0}),
    ({"logprobs": {"content": [{"top_logprobs": [{"token": "B"}]}]}}, None),
    ({"logprobs": "yes"}, None),
]


@pytest.mark.parametrize(("choice", "read"), BODIES)
def test_a_servers_logprobs_are_read_whatever_it_sends(choice: dict, read: dict[str, float] | None) -> None:
    assert _first_token_logprobs(choice) == read


async def test_a_script_gives_them_and_the_cache_keeps_them(tmp_path: Path) -> None:
    register_script("odds", [{"text": "B", "__logprobs__": {"B": -0.2, "A": -1.9}}])
    cache = ResponseCache(tmp_path / "c.db")
    first = await get_model("scripted/odds", cache=cache).generate(QUESTION, logprobs=2, max_tokens=1)
    again = await get_model("scripted/odds", cache=cache).generate(QUESTION, logprobs=2, max_tokens=1)
    assert first.text == "B" and first.top_logprobs == {"B": -0.2, "A": -1.9}
    assert again.cached and again.top_logprobs == first.top_logprobs


async def test_a_backend_without_them_is_one_clear_error() -> None:
    with pytest.raises(ModelError, match="scripted/first gave no log-probabilities"):
        await get_model("scripted/first", cache=False).generate(QUESTION, logprobs=5, choices=("A", "B"))
