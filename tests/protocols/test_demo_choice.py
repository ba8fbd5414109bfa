from lexicoord.models.pool import ModelPool
from lexicoord.models import Model
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.demo_choice import DEMO_ITEM, DemoChoice, demo_lineup
from lexicoord.runs.events import ChoiceEvent, ModelCallEvent, RoundClosedEvent
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

RIVER, MONEY = "the land alongside a river", "a financial institution"


async def play(tmp_path, script):
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("demo", script)), "scripted/demo")
    runner = Runner(Store(str(tmp_path / "d.db")), DemoChoice(), models=pool, progress=False)
    await runner.run("d", grid([DEMO_ITEM], [demo_lineup("scripted/demo")]))
    [(episode, events)] = list(runner.store.iter_run_events("d"))
    return episode, events


async def test_agreement(tmp_path) -> None:
    reply = {"choice": RIVER, "justification": "by the water"}
    episode, events = await play(tmp_path, {f"agent-{i}": [reply] for i in (1, 2, 3)})
    assert episode.outcome == {"choices": {f"agent-{i}": RIVER for i in (1, 2, 3)}, "agreed": True, "agreed_on": RIVER}
    assert sum(isinstance(e, ChoiceEvent) for e in events) == 3


async def test_disagreement_and_an_unparseable_reply_are_recorded(tmp_path) -> None:
    script = {
        "agent-1": [{"choice": RIVER, "justification": "water"}],
        "agent-2": [{"choice": MONEY, "justification": "closes"}],
        "agent-3": ["I cannot decide", "still cannot"],
    }
    episode, events = await play(tmp_path, script)
    assert episode.outcome["agreed"] is False and episode.outcome["choices"]["agent-3"] is None
    bad = next(e for e in events if isinstance(e, ChoiceEvent) and e.agent == "agent-3")
    assert bad.choice is None and bad.raw == "still cannot" and "no JSON" in bad.failure
    assert sum(isinstance(e, ModelCallEvent) and e.agent == "agent-3" for e in events) == 2
    closed = next(e for e in events if isinstance(e, RoundClosedEvent))
    assert closed.summary["agreed"] is False


async def test_choices_are_independent(tmp_path) -> None:
    prompts = {}

    def reply(msgs, cfg):
        prompts[msgs[0].content] = "\n".join(m.content for m in msgs)
        return {"choice": MONEY, "justification": "x"}

    await play(tmp_path, reply)
    assert len(prompts) == 3
    for text in prompts.values():
        assert MONEY not in text.split("Possible meanings:")[0], "no agent sees another's choice"
        assert "justification\": \"x" not in text
