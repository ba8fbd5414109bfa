"""The Model wrapper: cache, concurrency limit, call records — with a scripted provider."""

import asyncio

import pytest

from lexicoord.errors import ModelError
from lexicoord.models import GenerateConfig, Model, ModelCallRecord, ResponseCache, acting_as, observing
from lexicoord.models.provider import Provider, TransientError
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.models.types import ProviderResponse


def counting_model(cache: ResponseCache | None, latency: float = 0.0) -> tuple[Model, list]:
    calls: list = []

    def reply(messages, config):
        calls.append(messages[-1].content)
        return f"reply {len(calls)}"

    return Model(ScriptedProvider("count", reply, latency=latency), cache=cache), calls


async def test_cache_hit_and_miss(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    model, calls = counting_model(cache, latency=0.5)
    first = await model.generate("hello", seed=1)
    again = await model.generate("hello", seed=1)
    other_seed = await model.generate("hello", seed=2)
    other_prompt = await model.generate("bye", seed=1)
    assert not first.cached and again.cached and not other_seed.cached and not other_prompt.cached
    assert again.text == first.text and again.latency < 0.25, "a cached reply does not wait for the provider"
    assert calls == ["hello", "hello", "bye"]
    assert len(cache) == 3


async def test_cache_survives_reopening_and_can_be_turned_off(tmp_path) -> None:
    path = tmp_path / "cache.db"
    model, _ = counting_model(ResponseCache(path))
    await model.generate("persist")
    reopened, calls = counting_model(ResponseCache(path))
    assert (await reopened.generate("persist")).cached and calls == []
    uncached, calls = counting_model(None)
    await uncached.generate("persist")
    await uncached.generate("persist")
    assert len(calls) == 2


async def test_cache_key_ignores_transport_settings_but_not_schema(tmp_path) -> None:
    model, calls = counting_model(ResponseCache(tmp_path / "c.db"))
    await model.generate("q", timeout=5)
    assert (await model.generate("q", timeout=50, max_retries=0)).cached
    assert not (await model.generate("q", choices=("a", "b"))).cached


async def test_every_call_is_reported_to_the_observer_with_its_agent() -> None:
    records: list[ModelCallRecord] = []
    model = Model(ScriptedProvider("s", ["not json", '{"choice": "a"}']))
    with observing(records.append), acting_as("alice"):
        bad = await model.generate("pick", choices=("a", "b"), temperature=0.3)
        good = await model.generate("pick", choices=("a", "b"))
    assert bad.parse_error and bad.text == "not json"
    assert good.choice == "a"
    assert [r.agent for r in records] == ["alice", "alice"]
    assert records[0].text == "not json" and records[0].parse_error == bad.parse_error
    assert records[0].config["temperature"] == 0.3 and records[0].messages[-1].content == "pick"


async def test_failed_calls_are_reported_too() -> None:
    class Down(Provider):
        async def generate(self, messages, config):
            raise TransientError("server is down", kind="connection")

    records: list[ModelCallRecord] = []
    with observing(records.append), pytest.raises(ModelError, match="gave up after 2 attempts"):
        await Model(Down("down", "x"), max_retries=1, backoff_initial=0.01).generate("hi")
    assert records[0].error and records[0].attempts == 2


async def test_a_calls_latency_leaves_out_the_loading_of_the_weights() -> None:
    """The first call of an embedded model waits for its weights; that wait is the model's, not the call's."""
    class Loading(Provider):
        loaded = False

        async def prepare(self) -> None:
            if not self.loaded:
                await asyncio.sleep(0.4)
                self.loaded = True

        async def generate(self, messages, config):
            await asyncio.sleep(0.05)
            return ProviderResponse(text="ok")

    records: list[ModelCallRecord] = []
    model = Model(Loading("loading", "x"))
    with observing(records.append):
        first = await model.generate("hi")
        second = await model.generate("hi again")
    assert 0.04 < first.latency < 0.3 and 0.04 < second.latency < 0.3, (first.latency, second.latency)
    assert [r.latency for r in records] == [first.latency, second.latency]


async def test_concurrency_limit_is_shared_by_models_of_one_provider() -> None:
    in_flight = 0
    peak = 0

    class Slow(Provider):
        async def generate(self, messages, config):
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.05)
            in_flight -= 1
            from lexicoord.models import ProviderResponse

            return ProviderResponse(text="ok")

    a = Model(Slow("slowprov", "a"), max_concurrency=2)
    b = Model(Slow("slowprov", "b"), max_concurrency=2)
    await asyncio.gather(*(m.generate(str(i)) for i in range(5) for m in (a, b)))
    assert peak == 2


async def test_defaults_merge_with_per_call_settings() -> None:
    seen: list[GenerateConfig] = []
    model = Model(
        ScriptedProvider("s", lambda m, c: seen.append(c) or "x"),
        config=GenerateConfig(temperature=0.5, max_tokens=100),
    )
    await model.generate("a", max_tokens=10)
    assert seen[0].temperature == 0.5 and seen[0].max_tokens == 10


async def test_unexpected_provider_errors_are_recorded_too() -> None:
    class Broken(Provider):
        async def generate(self, messages, config):
            raise KeyError("surprise")

    records: list[ModelCallRecord] = []
    with observing(records.append), pytest.raises(KeyError):
        await Model(Broken("broken", "x")).generate("hi")
    assert records[0].error == "KeyError: 'surprise'" and records[0].attempts == 1
