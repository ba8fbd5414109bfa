import asyncio

import pytest

from lexicoord.errors import ModelNotFoundError, ScriptExhaustedError
from lexicoord.models import Model, acting_as, get_model
from lexicoord.models.providers.scripted import ScriptedProvider, register_script


def scripted(script, **kw) -> Model:
    return Model(ScriptedProvider("test", script, **kw))


async def test_list_is_served_in_order_then_fails_loudly() -> None:
    model = scripted(["one", "two"])
    assert (await model.generate("a")).text == "one"
    assert (await model.generate("b")).text == "two"
    with pytest.raises(ScriptExhaustedError, match="ran out of replies after 2"):
        await model.generate("c")


async def test_callable_sees_the_conversation_and_config() -> None:
    model = scripted(lambda msgs, cfg: {"choice": cfg.choices[-1]} if cfg.choices else msgs[-1].content.upper())
    assert (await model.generate("shout")).text == "SHOUT"
    assert (await model.generate("pick", choices=("x", "y"))).choice == "y"


async def test_mapping_by_agent_keeps_concurrent_agents_apart() -> None:
    model = scripted({"alice": ["a1", "a2"], "bob": ["b1"]}, latency=0.01)

    async def turn(agent: str) -> str:
        with acting_as(agent):
            return (await model.generate("go")).text

    results = await asyncio.gather(turn("bob"), turn("alice"), turn("alice"))
    assert results[0] == "b1" and sorted(results[1:]) == ["a1", "a2"]
    with pytest.raises(ScriptExhaustedError, match="agent 'bob'"):
        await turn("bob")
    with pytest.raises(ScriptExhaustedError, match="no replies for agent 'carol'"):
        await turn("carol")


async def test_the_call_log_is_kept_only_when_asked_for() -> None:
    kept, plain = ScriptedProvider("test", ["x", "y"], keep_calls=True), ScriptedProvider("test", ["x", "y"])
    for provider in (kept, plain):
        with acting_as("alice"):
            await Model(provider).generate("first prompt")
        await Model(provider).generate("second prompt")
    assert [(agent, [m.content for m in msgs]) for agent, msgs in kept.calls] == [
        ("alice", ["first prompt"]), (None, ["second prompt"])]
    assert plain.calls == [], "a long scripted campaign must not keep every prompt it sent"
    assert get_model("scripted/echo").provider.calls == [] and not get_model("scripted/echo").provider.keep_calls


async def test_synthetic_usage_counts_words() -> None:
    out = await scripted(["three word reply"]).generate("four words of prompt")
    assert out.usage.prompt_tokens == 4 and out.usage.completion_tokens == 3


async def test_named_scripts_through_the_registry() -> None:
    register_script("yes-no", ["yes", "no"])
    first = get_model("scripted/yes-no", cache=False)
    second = get_model("scripted/yes-no", cache=False)
    assert (await first.generate("q")).text == "yes"
    assert (await second.generate("q")).text == "yes", "each model starts the list afresh"
    assert (await get_model("scripted/first", cache=False).generate("q", choices=("p", "q"))).choice == "p"
    with pytest.raises(ModelNotFoundError, match="No script named 'scripted/nope'"):
        get_model("scripted/nope")


async def test_random_is_seeded_and_valid_under_a_schema() -> None:
    schema = {"type": "object", "properties": {"choice": {"enum": ["a", "b", "c"]}, "why": {"type": "string"}}}
    model = get_model("scripted/random", cache=False)
    outs = [await model.generate("q", json_schema=schema, seed=s) for s in range(12)]
    assert all(o.ok for o in outs)
    assert len({o.parsed["choice"] for o in outs}) > 1
    again = await model.generate("q", json_schema=schema, seed=3)
    assert again.parsed == outs[3].parsed
