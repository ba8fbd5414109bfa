"""A participant's room page that answers every request its seat is given, for any protocol's room, until the
room closes: the coordination game's votes and clarifications, a turn room's replies (the debate, COGENT, a
plugin's), Werewolf's talk and actions. ``pick`` says which of the offered choices it takes, so two groups can
play the same item differently; ``tag`` is the text it writes, so each group's record can be told apart.

Scripted: it checks what the study and the store keep of each game, never a model's behaviour.
"""

from __future__ import annotations

import json
import threading
from typing import Any


class AutoPage:
    def __init__(self, ws: Any, token: str, *, pick: int, tag: str) -> None:
        self.ws, self.pick, self.tag = ws, pick, tag
        self.answered: set[str] = set()
        self.errors: list[dict[str, Any]] = []
        self.closed = threading.Event()
        self.state: dict[str, Any] | None = None
        ws.send_json({"type": "hello", "token": token})
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                msg = json.loads(self.ws.receive_text())
            except Exception:  # noqa: BLE001 - the room closed the page (its games are over)
                self.closed.set()
                return
            if msg["type"] == "error":
                self.errors.append(msg)
            elif msg["type"] == "state":
                self.state = msg
                self._answer(msg)

    def _answer(self, state: dict[str, Any]) -> None:
        request = state.get("you", {}).get("request")
        if not request:
            return
        game = state.get("room", {}).get("game") or {}
        key = json.dumps([game.get("number"), request], sort_keys=True)
        if key in self.answered:
            return
        self.answered.add(key)
        kind, round_ = request.get("kind"), request.get("round")
        if "fields" in request:  # a turn room: the request's own form
            value: dict[str, Any] = {}
            for f in request["fields"]:
                if f["kind"] == "choice":
                    value[f["name"]] = f["choices"][self.pick % len(f["choices"])]
                else:
                    value[f["name"]] = f"{self.tag} {'x' * max(0, f.get('min_length', 0))}".strip()
            self.ws.send_json({"type": "reply", "kind": kind, "round": round_, "value": value})
        elif "choices" in request:  # Werewolf: a talk or an action on one of the choices
            if kind == "speak":
                self.ws.send_json({"type": "speak", "round": round_, "text": f"{self.tag} speaks"})
            elif request["choices"]:
                target = request["choices"][self.pick % len(request["choices"])]
                self.ws.send_json({"type": "act", "round": round_, "action": kind, "target": target})
        elif kind in ("choose", "announce"):  # the coordination game
            options = game["item"]["options"]
            self.ws.send_json({"type": "choose", "round": round_, "choice": options[self.pick % len(options)],
                               "justification": self.tag})
        elif kind == "clarify":
            self.ws.send_json({"type": "clarify", "round": round_, "statement": f"{self.tag} means it"})
