"""The "Writing a protocol" page's example, run as written: a new protocol is one module and one registration."""

from __future__ import annotations

import re
import types
from typing import Any

import pytest

from lexicoord.core.audience import Viewer, visible
from lexicoord.core.events import MessageEvent
from lexicoord.core.registry import get_protocol, protocols
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.docs_pages import page


def example_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", page("writing-a-protocol.md"), re.S)


def load_example() -> types.ModuleType:
    module = types.ModuleType("my_game")
    exec(compile(example_blocks()[0], "writing-a-protocol.md:my_game", "exec"), module.__dict__)
    return module


@pytest.fixture
def registry_restored():
    """The example registers itself; take it out again so later tests see the installed protocols only."""
    yield
    from lexicoord.core import registry

    registry.unregister_protocol("same-word")


async def test_the_example_registers_and_plays_by_its_rules(tmp_path, registry_restored) -> None:
    game = load_example()
    game.register()
    assert "same-word" in protocols() and get_protocol("same-word").rules() is game.SameWord
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("words", {"a": [{"word": "Hammer"}, {"word": "hammer"}], "b": [{"word": "hammer"}],
                                              "c": [{"word": "mallet"}]})), "scripted/words")
    runner = Runner(Store(str(tmp_path / "w.db")), game.SameWord(), models=pool)
    seats = {n: AgentSpec(name=n, model="scripted/words") for n in "abc"}
    item = {"id": "t1", "thing": "a tool for driving nails"}
    await runner.run("w", grid([item], [[seats["a"], seats["b"]]]))
    await runner.run("w2", grid([item], [[seats["c"], seats["a"]]]))
    [(first, events)] = list(runner.store.iter_run_events("w"))
    [(second, _)] = list(runner.store.iter_run_events("w2"))
    assert first.outcome == {"agreed": True, "words": {"a": "hammer", "b": "hammer"}}
    back = game.SameWord.outcome_of(first)  # the example's declared outcome type, read back from the store
    assert type(back) is game.SameWordOutcome and back.words == {"a": "hammer", "b": "hammer"}
    assert second.outcome is not None and second.outcome["agreed"] is False
    said = [e for e in events if isinstance(e, MessageEvent)]
    assert {e.agent for e in said} == {"a", "b"}
    assert not [e for e in visible(said, Viewer(name="b")) if e.agent == "a"], "a's word is a's alone"


@pytest.mark.embedded
def test_the_example_runs_as_written_on_the_embedded_model(tmp_path, monkeypatch, registry_restored) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for block in example_blocks():
        exec(compile(block, "writing-a-protocol.md", "exec"), namespace)
    store = Store()
    [(episode, _)] = list(store.iter_run_events("same-word-1"))
    assert episode.status == "done", episode.error
    assert set(episode.outcome["words"]) == {"a", "b"} and isinstance(episode.outcome["agreed"], bool)
