"""A model outage is not a played game: with one seat's server failing every call (a real HTTP server on
loopback), every episode fails, the summary names the seat, and a resume plays them again once it is back."""

from __future__ import annotations

from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model, get_model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.models.fault_server import FaultServer, Reply, completion

OPTIONS = ["the side of a river", "a place that keeps money"]
ITEMS = [{"id": f"bank-{i}", "sentence": "Meet me at the bank.", "word": "bank", "options": OPTIONS,
          "intended": None, "open": True} for i in range(3)]
GOOD = '{"choice": "the side of a river", "justification": "water"}'


async def test_a_seat_whose_server_fails_every_call_fails_its_episodes_until_it_is_back(tmp_path) -> None:
    down = {"on": True}

    def responder(n: int, request: dict) -> Reply:
        if down["on"]:
            return Reply(500, '{"error": {"message": "overloaded"}}', {"Content-Type": "application/json"})
        return completion(GOOD)

    lineup = [AgentSpec(name="a1", model="scripted/s"), AgentSpec(name="a2", model="openai-compatible/fake-model")]
    store = Store(str(tmp_path / "o.db"))
    with FaultServer(responder) as server:
        def runner() -> Runner:
            pool = ModelPool(cache=False)
            pool.add(Model(ScriptedProvider("s", lambda m, c: GOOD)), "scripted/s")
            pool.add(get_model("openai-compatible/fake-model", cache=False, base_url=server.base_url,
                               backoff_initial=0.01), "openai-compatible/fake-model")
            return Runner(store, CoordinationGame(), models=pool)

        first = await runner().run("o", grid(ITEMS, [lineup]))
        assert (first.done, first.failed) == (0, 3), "an outage is not three games played"
        assert first.failed_by_seat == {"a2": 3}
        assert all(e.startswith("bank-") and "seat a2:" in e and "HTTP 500" in e for e in first.errors)
        down["on"] = False
        second = await runner().run("o", grid(ITEMS, [lineup]))
    assert (second.done, second.failed, second.skipped) == (3, 0, 0), "a resume plays the failed episodes again"
    assert [e.status for e in store.episodes("o")] == ["done"] * 3
