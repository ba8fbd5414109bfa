"""The reply bound: no provider's reply, scripted or served, grows past what the model layer lets through.

A model that ignores its token limit (a scripted echo of its own prompt, a broken server) would otherwise feed
ever longer replies into every later prompt and every stored event, until the store refuses the episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.models import GenerateConfig, Model, ModelCallRecord, ResponseCache, observing
from lexicoord.models.model import MAX_CHARS_PER_TOKEN, MAX_REPLY_CHARS
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.pool import ModelPool
from lexicoord.models.provider import Provider
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.models.registry import get_model
from lexicoord.models.types import ChatMessage, ProviderResponse
from lexicoord.protocols.werewolf import WerewolfGame
from lexicoord.protocols.werewolf.events import SpeechEvent
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store


class DeafServer(Provider):
    """A backend that ignores ``max_tokens`` and answers with ``size`` characters, as a broken server might."""

    def __init__(self, size: int) -> None:
        super().__init__("deaf", "server")
        self.size = size

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> ProviderResponse:
        return ProviderResponse(text="ab" * (self.size // 2), finish_reason="stop")


def providers(size: int) -> list[Provider]:
    """The same oversized reply from a scripted model (no spaces, so its own word cut cannot help) and a server."""
    return [ScriptedProvider("long", lambda m, c: "z" * size), DeafServer(size)]


@pytest.mark.parametrize("kind", ["scripted", "server"])
async def test_a_reply_over_the_bound_is_cut_and_marked_whatever_the_provider(kind: str) -> None:
    provider = providers(3 * MAX_REPLY_CHARS)[kind == "server"]
    records: list[ModelCallRecord] = []
    with observing(records.append):
        out = await Model(provider).generate("say a lot")
    assert len(out.text) == MAX_REPLY_CHARS and out.finish_reason == "length"
    assert len(records) == 1 and records[0].text == out.text and records[0].finish_reason == "length"


@pytest.mark.parametrize("kind", ["scripted", "server"])
async def test_a_token_limit_bounds_the_reply_at_a_few_characters_a_token(kind: str) -> None:
    out = await Model(providers(50_000)[kind == "server"]).generate("speak", max_tokens=100)
    assert len(out.text) == 100 * MAX_CHARS_PER_TOKEN and out.finish_reason == "length"


async def test_a_reply_within_the_bound_is_untouched() -> None:
    exact = await Model(providers(MAX_REPLY_CHARS)[1]).generate("fill it")
    assert len(exact.text) == MAX_REPLY_CHARS and exact.finish_reason == "stop"
    words = "word " * 150
    short = await Model(ScriptedProvider("w", [words])).generate("speak", max_tokens=160)
    assert short.text == words and short.finish_reason == "stop"


async def test_the_cache_keeps_only_the_cut_reply(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    first = await Model(providers(2 * MAX_REPLY_CHARS)[0], cache=cache).generate("q")
    again = await Model(providers(2 * MAX_REPLY_CHARS)[0], cache=cache).generate("q")
    assert again.cached and again.text == first.text and len(again.text) == MAX_REPLY_CHARS
    assert again.finish_reason == "length"


async def test_a_cut_json_reply_is_a_parse_failure_not_a_value() -> None:
    padded = '{"choice": "a", "why": "' + "z" * (2 * MAX_REPLY_CHARS) + '"}'
    out = await Model(ScriptedProvider("j", [padded])).generate("pick", json_schema={"type": "object"})
    assert out.parsed is None and out.parse_error and out.finish_reason == "length"


async def test_the_bound_is_a_model_option() -> None:
    out = await get_model("scripted/echo", cache=False, max_reply_chars=12).generate("x" * 40)
    assert out.text == "x" * 12 and out.finish_reason == "length"
    with pytest.raises(ConfigError, match="max_reply_chars"):
        get_model("scripted/echo", cache=False, max_reply_chars=0)


def echo_without_spaces(messages: Any, config: Any) -> Any:
    """A scripted player whose speech is its whole prompt, spaces removed: one "word" the script's own word cut
    never shortens, and a prompt that holds every earlier speech, so speeches double day after day. Capped at
    60,000 characters here so that the code without a bound still finishes, only large."""
    if config.choices:
        return {"choice": config.choices[0]}
    return messages[-1].content.replace(" ", "")[:60_000]


async def test_a_werewolf_game_of_echoing_players_stays_bounded_and_is_saved(tmp_path) -> None:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("echo", echo_without_spaces)), "scripted/echo-all")
    lineup = [AgentSpec(name=f"Player {i}", model="scripted/echo-all") for i in range(1, 7)]
    runner = Runner(Store(str(tmp_path / "w.db")), WerewolfGame(), models=pool)
    summary = await runner.run("w", grid([{"id": "game", "seed": 3}], [lineup], settings=[{"max_days": 3}]))
    assert summary.done == 1 and summary.failed == 0
    [(episode, events)] = list(runner.store.iter_run_events("w"))
    assert episode.status == "done", episode.error
    speeches = [e for e in events if isinstance(e, SpeechEvent)]
    calls = [e for e in events if isinstance(e, ModelCallEvent) and not e.config.get("choices")]
    assert speeches and calls
    bound = 160 * MAX_CHARS_PER_TOKEN  # Werewolf's speech limit is 160 tokens
    assert max(len(s.text) for s in speeches) <= bound
    assert all(len(c.text or "") <= bound for c in calls)
    assert any(c.finish_reason == "length" for c in calls), "the echo did go past the bound, and was cut"
