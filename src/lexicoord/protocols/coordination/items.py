"""Where the coordination game's rooms and studies draw their sentences from: named datasets, each checked when
the server or study starts, a file's items then read one game at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lexicoord.core.items import ItemSource
from lexicoord.protocols.coordination.lineup import dataset_from


class Datasets(ItemSource):
    setting = "dataset"
    forms = "builtin, a JSONL file, coarsewsd:FOLDER, wictsv:FOLDER or hf:NAME"
    defaults = {"builtin": "builtin"}

    def load(self, name: str, where: str) -> Sequence[Any]:
        return dataset_from(where, None, None, None)

    def study_settings(self, name: str) -> dict[str, Any]:
        """A study's games take their sentences from its set, never a leader's own (automatic mode)."""
        return {"dataset": name, "mode": "automatic"}


ITEMS = Datasets()
