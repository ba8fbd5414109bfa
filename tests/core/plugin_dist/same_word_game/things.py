"""What is named: the task (where things come from, how a game is scored) and where rooms and studies find them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lexicoord.core.items import ItemSource
from lexicoord.tasks.base import Task
from same_word_game.rules import SameWordOutcome, Thing

BUILTIN = ["a tool for driving nails", "a seat with four legs", "a device that shows the time"]


class Things(Task[Thing, SameWordOutcome]):
    """``builtin`` (three things), a JSONL file of ``{"id", "thing"}`` lines, or ``hf:NAME``."""

    name = "things"
    item_model = Thing

    def load(self, source: str) -> list[Thing]:
        if source == "builtin":
            return [Thing(id=f"t{i}", thing=thing) for i, thing in enumerate(BUILTIN)]
        return super().load(source)

    def score(self, item: dict[str, Any], outcome: SameWordOutcome) -> bool | None:
        return outcome.agreed


TASK = Things()


class ThingSets(ItemSource):
    setting = "things"
    forms = "builtin or a JSONL file of {id, thing}: same-word/NAME=things.jsonl"
    defaults = {"builtin": "builtin"}

    def load(self, name: str, where: str) -> Sequence[Any]:
        return [TASK.as_task(thing) for thing in TASK.load(where)]


ITEMS = ThingSets()
