"""Where COGENT's rooms and studies draw their questions from: a benchmark's file, named by its task (``gsm8k``,
``folio``, ``mmlu``), loaded whole and checked when the server or study starts. A room may also play a question
its creator types (the room's own ``typed`` source), which needs no set."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lexicoord.core.items import ItemSource
from lexicoord.errors import ConfigError
from lexicoord.tasks.benchmarks import BENCHMARKS


class Benchmarks(ItemSource):
    setting = "source"
    forms = f"a benchmark's file, named by its task ({', '.join(BENCHMARKS)}): cogent/gsm8k=PATH"

    def load(self, name: str, where: str) -> Sequence[Any]:
        if name not in BENCHMARKS:
            raise ConfigError(f"COGENT's items are named by their task ({', '.join(BENCHMARKS)}): "
                              f"cogent/gsm8k=PATH, not {name!r}.")
        bench = BENCHMARKS[name]
        return [bench.as_task(i) for i in bench.load(where)]


ITEMS = Benchmarks()
