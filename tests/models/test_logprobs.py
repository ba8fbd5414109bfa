"""The first token's log-probabilities through the model layer: the embedded model, a server, a script, the cache."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from lexicoord.errors import ModelError
from lexicoord.models import ResponseCache, get_model
from lexicoord.models.cache import cache_key
from lexicoord.models.providers.openai_compat import _first_token_logprobs
from lexicoord.models.providers.scripted import register_script
from lexicoord.models.types import ChatMessage, GenerateConfig
from tests.models.fault_server import FaultServer, Reply, completion

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
    with pytest.raises(ModelError, match="scripted/first gives no log-probabilities"):
        await get_model("scripted/first", cache=False).generate(QUESTION, logprobs=5, choices=("A", "B"))


async def test_a_script_gives_at_most_the_k_likeliest_and_only_when_asked() -> None:
    register_script("many-odds", [{"text": {"choice": "B"}, "__logprobs__": {"A": -1.5, "B": -0.3, "C": -2.9}}] * 2)
    asked = await get_model("scripted/many-odds", cache=False).generate(QUESTION, logprobs=2)
    plain = await get_model("scripted/many-odds", cache=False).generate(QUESTION)
    assert asked.top_logprobs == {"B": -0.3, "A": -1.5} and plain.top_logprobs is None
    assert asked.text == plain.text == '{"choice": "B"}'  # a dict or list "text" is sent as JSON, as any reply


def with_logprobs(text: str, top: dict[str, float]) -> Reply:
    """OpenAI's chat completion with the first token's ``top_logprobs``."""
    reply = completion(text)
    body = json.loads(reply.body)
    alternatives = [{"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top.items()]
    body["choices"][0]["logprobs"] = {"content": [{"token": text, "logprob": top[text], "bytes": list(text.encode()),
                                                   "top_logprobs": alternatives}]}
    return Reply(200, json.dumps(body), reply.headers)


async def test_a_server_that_sends_none_is_the_clear_error_and_is_not_cached_so_it_is_asked_again(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")

    def responder(n: int, _req: dict) -> Reply:  # a server restarted with log-probabilities on after the first call
        return completion("B") if n == 0 else with_logprobs("B", {"B": -0.1, "A": -2.4})

    with FaultServer(responder) as server:
        model = get_model("openai-compatible/fake-model", cache=cache, base_url=server.base_url)
        with pytest.raises(ModelError, match="openai-compatible/fake-model gives no log-probabilities"):
            await model.generate(QUESTION, logprobs=2, max_tokens=1)
        assert len(cache) == 0 and server.requests[0][1]["logprobs"] is True
        assert server.requests[0][1]["top_logprobs"] == 2
        out = await model.generate(QUESTION, logprobs=2, max_tokens=1)
        again = await model.generate(QUESTION, logprobs=2, max_tokens=1)
        plain = await model.generate("hi")
    assert out.top_logprobs == {"B": -0.1, "A": -2.4} and not out.cached
    assert again.cached and again.top_logprobs == out.top_logprobs
    assert "logprobs" not in server.requests[-1][1] and "top_logprobs" not in server.requests[-1][1]
    assert plain.top_logprobs is None


def test_logprobs_are_in_the_cache_key_only_when_asked_so_older_keys_stand() -> None:
    msgs = [ChatMessage(role="user", content=QUESTION)]
    keys = {k: cache_key("m", msgs, GenerateConfig(logprobs=k)) for k in (None, 2, 3)}
    assert len(set(keys.values())) == 3
    assert "logprobs" not in GenerateConfig(temperature=0).cache_fields()  # the key an earlier version computed


async def test_a_row_cached_before_logprobs_existed_still_loads(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    msgs = [ChatMessage(role="user", content="hi")]
    model = get_model("scripted/echo", cache=cache)
    key = cache_key(model.provider.cache_identity, msgs, model.config)
    with sqlite3.connect(tmp_path / "c.db") as db:  # a row as an earlier version wrote it: no top_logprobs
        db.execute("INSERT INTO responses VALUES (?, ?, 0, ?)",
                   (key, model.spec, json.dumps({"text": "old", "usage": {}, "model": None, "finish_reason": "stop"})))
    out = await model.generate("hi")
    assert out.cached and out.text == "old" and out.top_logprobs is None
