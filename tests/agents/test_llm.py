from lexicoord.agents import LLMAgent
from lexicoord.models import GenerateConfig, Model
from lexicoord.models.providers.scripted import ScriptedProvider


async def test_agent_keeps_a_private_history() -> None:
    seen = []
    model = Model(ScriptedProvider("s", lambda msgs, cfg: seen.append(list(msgs)) or f"answer {len(seen)}"))
    alice = LLMAgent("alice", model, system_prompt="You are alice.")
    bob = LLMAgent("bob", model)
    await alice.ask("first?", remember=True)
    await bob.ask("hello?")
    await alice.ask("second?")
    assert [m.content for m in seen[2]] == ["You are alice.", "first?", "answer 1", "second?"]
    assert [m.content for m in seen[1]] == ["hello?"], "bob never sees alice's history"


async def test_structured_ask_retries_an_unparseable_reply_with_another_seed() -> None:
    seeds = []

    def reply(msgs, cfg):
        seeds.append(cfg.seed)
        return "not json" if len(seeds) == 1 else '{"choice": "b"}'

    agent = LLMAgent("a", Model(ScriptedProvider("s", reply)), config=GenerateConfig(seed=5))
    out = await agent.ask_structured("pick", GenerateConfig(choices=("a", "b")))
    assert out.choice == "b" and seeds[0] == 5 and seeds[1] != 5


async def test_structured_ask_returns_the_raw_reply_when_it_stays_unparseable() -> None:
    agent = LLMAgent("a", Model(ScriptedProvider("s", lambda m, c: "still prose")))
    out = await agent.ask_structured("pick", GenerateConfig(choices=("a", "b")), parse_retries=2)
    assert not out.ok and out.text == "still prose" and "no JSON" in out.parse_error
