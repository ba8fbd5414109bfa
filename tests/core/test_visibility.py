"""Who may see what, as a property of whole games: a private marker never reaches a seat outside its audience.

The games are scripted (their moves are drawn from a seeded random stream, so many
different games are played), and the check reads what each seat was actually given:
every prompt a model seat received (its recorded model calls), and every frame a
person's browser received from a live room.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from lexicoord.core.audience import Audience
from lexicoord.core.events import ChoiceEvent
from lexicoord.core.seat import Request, Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.observe import ModelCallEvent, current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.debate import DebateStudy
from lexicoord.protocols.debate.replies import FeedbackEvent
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import twins
from lexicoord.tasks.tabletop import generate

ITEM = twins(generate(1, seed=0)[0])[0].as_task()
MARK = re.compile(r"«[^»]+»")


def debate_script(rng: random.Random) -> Any:
    """Every reply carries a marker naming its author and its call; followers agree or not at random."""
    count = {"n": 0}

    def reply(messages: Any, config: Any) -> Any:
        agent = current_agent.get() or "?"
        count["n"] += 1
        mark = f"«{agent}:{count['n']}»"
        if "stance" in config.json_schema["properties"]:
            stance = rng.choice(["agree", "disagree"])
            return {"stance": stance, "reasoning": f"My reason {mark}.", "alternative": ""}
        return {"reasoning": f"Leading {mark}.", "verdict": "ambiguous", "question": "How many?"}

    return reply


def prompts_of(events: list[Any], seat: str) -> str:
    return "\n".join(m.content for e in events if isinstance(e, ModelCallEvent) and e.agent == seat
                     for m in e.messages)


class Recording:
    """The run's seat maker, with every request each seat was given kept (its view and its prompt)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.given: dict[str, list[str]] = {}

    def __call__(self, spec: AgentSpec, ctx: Any, system_prompt: str | None) -> Seat:
        seat = self.inner(spec, ctx, system_prompt)
        given = self.given.setdefault(spec.name, [])
        real = seat.answer

        async def answer(request: Request) -> Any:
            given.append(json.dumps(request.view, ensure_ascii=False) + "\n" + request.prompt)
            return await real(request)

        seat.answer = answer  # type: ignore[method-assign]
        return seat


@pytest.mark.parametrize("seed", range(24))
async def test_feedback_never_reaches_a_seat_outside_its_audience(tmp_path, seed: int) -> None:
    rng = random.Random(seed)
    followers = [f"f{i}" for i in range(1, rng.randint(1, 3) + 1)]
    lineup = [AgentSpec(name=n, model="scripted/marks") for n in ["lead", *followers]]
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("marks", debate_script(rng))), "scripted/marks")
    runner = Runner(Store(str(tmp_path / "v.db")), DebateStudy(), models=pool)
    recording = runner.seats = Recording(runner.seats)  # type: ignore[assignment]
    settings = {"condition": "debate", "rounds": rng.randint(1, 4)}
    await runner.run("v", grid([ITEM], [lineup], settings=[settings]))
    [(episode, events)] = list(runner.store.iter_run_events("v"))
    assert episode.status == "done", episode.error

    feedback = [e for e in events if isinstance(e, FeedbackEvent)]
    assert feedback, "every game has feedback to keep private"
    for seat in ["lead", *followers]:
        seen = prompts_of(events, seat) + "\n".join(recording.given[seat])  # what the model read, and every view
        for e in feedback:
            [mark] = MARK.findall(e.reasoning)
            if seat in e.audience.agents:
                continue
            assert mark not in seen, f"{seat} was shown {e.agent}'s feedback {mark} (seed {seed})"
    last_round = max(e.round or 0 for e in feedback)
    for e in feedback:  # and the audience does get it: the leader revises on every earlier round's feedback,
        if (e.round or 0) < last_round:  # and a follower's next view shows it its own
            [mark] = MARK.findall(e.reasoning)
            assert mark in prompts_of(events, "lead")
            assert mark in "\n".join(recording.given[e.agent or ""])


def test_a_person_s_frames_never_carry_a_model_s_private_text(tmp_path) -> None:
    """A live coordination room: each model reply carries a private marker outside its answer (so it lives
    only in that seat's model-call record), and mid-game an event for one seat's private channel arrives;
    no frame any browser receives may contain either."""
    from fastapi.testclient import TestClient

    from lexicoord.tasks.ambiguous import builtin_items
    from lexicoord.web.app import create_app
    from lexicoord.web.services import Services
    from tests.web.conftest import Browser, create_room, join

    def whisper(messages: Any, config: Any) -> Any:
        import json

        schema = config.json_schema or {}
        props = schema.get("properties", {})
        if "choice" in props:
            answer = {"choice": props["choice"]["enum"][0], "justification": "the first"}
        else:
            answer = {"statement": "I mean the first one"}
        return f"«secret of {current_agent.get()}» " + json.dumps(answer)

    async def inject(room: Any) -> None:
        room.game.on_event(ChoiceEvent(agent="ghost", round=1, choice=room.adapter.table.item["options"][0],
                                  justification="«secret of a private channel»", audience=Audience.only("ghost")))

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("whisper", whisper)), "scripted/first")
    services = Services(store=Store(str(tmp_path / "w.db")), models=pool, items={"coordination": {"builtin": builtin_items()[:3]}},
                        model_names=["scripted/first"])
    frames: list[str] = []
    with TestClient(create_app(services, http_rate=1000, http_burst=1000)) as client:
        code = create_room(client, agents=[{"name": "bot", "model": "scripted/first"},
                                           {"name": "bot2", "model": "scripted/first"}])
        token = join(client, code, "Ann")
        with client.websocket_connect(f"/ws/{code}") as ws:
            ann = Browser(ws)
            original = ann.receive

            def receive() -> dict[str, Any]:
                msg = original()
                frames.append(str(msg))
                return msg

            ann.receive = receive  # type: ignore[method-assign]
            ann.hello(token)
            room = next(iter(client.app.state.rooms.by_code.values()))
            for _ in range(2):
                ann.send(type="start")
                ann.vote(0)
                # An event only the bot may see, as a protocol with private channels would emit mid-game.
                client.portal.call(inject, room)
                ann.vote(0)
                ann.phase("over")
    events = [e for _, evs in Store(str(tmp_path / "w.db")).iter_run_events(
        Store(str(tmp_path / "w.db")).run("room-").id) for e in evs]
    secret = [e for e in events if isinstance(e, ModelCallEvent) and "«secret" in (e.text or "")]
    assert secret, "the models did whisper"
    assert frames and not any("«secret" in f for f in frames), "a model's private text reached a browser"
