"""Studies served in-process (Starlette's TestClient) on a real SQLite file, with scripted agents.

Scripted agents stand in for models only where the study's rules are checked (stages, lobby, codes,
takeovers); the browser test seats the embedded model.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.experiments.source import Source
from lexicoord.models.model import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.store import Store
from lexicoord.studies.file import StudyFile, checked
from lexicoord.studies.serve import StudyPart, services_for
from lexicoord.web.app import create_app
from tests.web.conftest import Browser, first_option

KEY = "admin-key-for-tests"
CODES = {"completed": "DONE1", "no_consent": "NOPE2", "failed_quiz": "QUIZ3", "no_group": "ALONE4",
         "dropped": "GONE5"}
BASE: dict[str, Any] = {
    "name": "pilot", "protocol": "coordination", "title": "A word game",
    "game": {"seat_timeout": 30, "agent_timeout": 10},
    "group": {"people": 2, "games": 1, "agents": [{"name": "Bot", "model": "scripted/first"}]},
    "consent": {"text": "Do you agree?"},
    "instructions": {"text": "Pick the meaning **everyone** picks."},
    "quiz": {"attempts": 2, "questions": [{"id": "goal", "text": "When does a game end?",
                                           "options": ["All agree", "Never"], "answer": "All agree"}]},
    "lobby": {"timeout": 300, "fill_with_agents": False},
    "dropout": {"grace": 60, "idle": True},
    "survey": {"questions": [
        {"id": "clear", "kind": "likert", "text": "It was clear.", "scale": 7},
        {"id": "colour", "kind": "choice", "text": "Choose Blue.", "options": ["Red", "Blue"], "expect": "Blue"},
        {"id": "comments", "kind": "text", "text": "Anything else?", "required": False, "max_length": 200},
    ]},
    "completion": {"codes": CODES, "redirect": "https://app.prolific.com/submissions/complete?cc={code}"},
    "bonus": {"per_game": 0.5, "when": "converged", "completed": 0.1},
}


def values(**sections: Any) -> dict[str, Any]:
    """The base study with ``sections`` replaced or merged (a dict merges into the section)."""
    out = copy.deepcopy(BASE)
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def study_of(data: dict[str, Any]) -> StudyFile:
    return checked(Source(Path("study.toml"), copy.deepcopy(data), {}, ""))


def pool() -> ModelPool:
    p = ModelPool(cache=False)
    p.add(Model(ScriptedProvider("first", first_option)), "scripted/first")
    return p


@contextlib.contextmanager
def serving(db: Path, data: dict[str, Any], *, public: bool = True, accept_changes: bool = False,
            tune: Callable[[StudyFile], None] | None = None) -> Iterator[tuple[TestClient, StudyPart]]:
    """The study's app as ``lexicoord study serve`` makes it (rooms without the run viewer, the study's part)."""
    file = study_of(data)
    if tune is not None:
        tune(file)  # shorter limits than a file may set, so tests do not wait for minutes
    services = services_for(file, Store(str(db)), pool())
    part = StudyPart(file, services, KEY, public, enter_rate=1000, enter_burst=1000, accept_changes=accept_changes)
    app = create_app(services, allowed_hosts=["testserver"], parts=[part], viewer=False, idle_close=None,
                     unused_close=None)
    with TestClient(app) as client:
        client.sockets = []  # type: ignore[attr-defined]
        try:
            yield client, part
        finally:
            for ws in client.sockets:  # type: ignore[attr-defined]
                ws.__exit__(None, None, None)  # an open page would keep the server from stopping


class Participant:
    """One participant's page, as its script speaks to the server."""

    def __init__(self, client: TestClient, pid: str, study: str = "pilot") -> None:
        self.client, self.pid = client, pid
        self.api = f"/api/studies/{study}"
        self.token: str | None = None

    def headers(self) -> dict[str, str]:
        out = {"X-Participant": self.pid}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out

    def enter(self, **extra: Any) -> dict[str, Any]:
        r = self.client.post(f"{self.api}/enter", json={"pid": self.pid, **extra}, headers=self.headers())
        assert r.status_code in (200, 201), r.text
        self.token = r.json()["token"] or self.token
        return r.json()["view"]

    def answer(self, stage: str, expect: int = 200, **body: Any) -> dict[str, Any]:
        r = self.client.post(f"{self.api}/answer", json={"stage": stage, **body}, headers=self.headers())
        assert r.status_code == expect, r.text
        return r.json()

    def me(self, stage: str | None = None, ready: int | None = None) -> dict[str, Any]:
        query = (f"?stage={stage}" if stage else "") + (f"&ready={ready}" if stage and ready is not None else "")
        r = self.client.get(f"{self.api}/me{query}", headers=self.headers())
        assert r.status_code == 200, r.text
        return r.json()

    def to_lobby(self) -> dict[str, Any]:
        self.enter()
        self.answer("consent", agree=True)
        self.answer("instructions")
        return self.answer("quiz", answers={"goal": "All agree"})["view"]

    def until(self, stage: str, limit: int = 40) -> dict[str, Any]:
        view = self.me()
        for _ in range(limit):
            if view["stage"] == stage and (stage != "game" or view["ready"]):
                return view
            # As the page does: a game not ready yet is waited for with ready=0 (answered once it is ready).
            waiting_game = view["stage"] == "game" and not view.get("ready")
            view = self.me(view["stage"] if view["stage"] in ("lobby", "game") else None, 0 if waiting_game else None)
        raise AssertionError(f"{self.pid} never reached {stage}: {view}")

    def seat(self) -> tuple[str, str]:
        r = self.client.post(f"{self.api}/play", headers=self.headers())
        assert r.status_code == 200, r.text
        return r.json()["room"], r.json()["token"]

    def play(self) -> Browser:
        """Open the game's room page and vote the first option in every round until the game is over."""
        room, token = self.seat()
        ws = self.client.websocket_connect(f"/ws/{room}")
        browser = Browser(ws.__enter__()).hello(token)
        self.client.sockets.append(ws)  # type: ignore[attr-defined]
        return browser

    def survey(self, **answers: Any) -> dict[str, Any]:
        body = {"clear": 6, "colour": "Blue", "comments": "fine", **answers}
        return self.answer("survey", answers=body)


def short_grace(file: StudyFile) -> None:
    """A grace period shorter than a file may set, so a dropout is taken over at once."""
    file.dropout.grace = 0.3


def one_stays_one_never_comes(client: TestClient, part: StudyPart) -> tuple[Participant, Participant, Browser]:
    """Two participants grouped; the first opens the game, the second never does (away from the start: no
    restart's grace here). Returns both and the first's game page."""
    part.study.reconnect = 0.0
    stay, leave = Participant(client, "stay"), Participant(client, "leave")
    stay.to_lobby()
    leave.to_lobby()
    stay.until("game")
    return stay, leave, stay.play()


def play_out(*browsers: Browser) -> None:
    """Everyone votes the first option in each round until the game is over."""
    done = set()
    while len(done) < len(browsers):
        for i, b in enumerate(browsers):
            if i in done:
                continue
            s = b.until(lambda s, b=b: s["room"]["phase"] == "over" or (s["you"].get("request") is not None  # type: ignore[misc]
                        and b._key(s) not in b.answered))
            if s["room"]["phase"] == "over":
                done.add(i)
            else:
                b.vote(0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "study.db"
