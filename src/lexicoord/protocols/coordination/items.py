"""What a coordination game's item is, and where its rooms and studies draw their sentences from: named datasets,
each checked when the server or study starts, a file's items then read one game at a time.

:class:`CoordinationItem` is the game's view of an item: the fields its rules, views and simulated seats read.
The task's :class:`~lexicoord.tasks.ambiguous.AmbiguityItem` is stricter (it checks a dataset's lines as they
load) and carries more (category, domain, note); a gate's check plays the game on an item of its own making with
no id and no intended meaning. Every other key an item carries (a task's columns, a manual game's proposals) is
ignored here and kept in the stored episode, where the task's score and the statistics read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.core.items import ItemSource


class CoordinationItem(BaseModel):
    """A sentence, the ambiguous word in it, the meanings on offer, and the meaning it settles (``None``: open)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = None
    sentence: str = Field(min_length=1)
    word: str = Field(min_length=1)
    #: The candidate meanings in the item's order (the rules put an announced one first).
    options: list[str] = Field(min_length=2)
    intended: str | None = None


class Datasets(ItemSource):
    setting = "dataset"
    forms = "builtin, a JSONL file, coarsewsd:FOLDER, wictsv:FOLDER or hf:NAME"
    defaults = {"builtin": "builtin"}

    def load(self, name: str, where: str) -> Sequence[Any]:
        from lexicoord.protocols.coordination.lineup import dataset_from  # the task's loaders, read when used

        return dataset_from(where, None, None, None)

    def study_settings(self, name: str) -> dict[str, Any]:
        """A study's games take their sentences from its set, never a leader's own (automatic mode)."""
        return {"dataset": name, "mode": "automatic"}


ITEMS = Datasets()
