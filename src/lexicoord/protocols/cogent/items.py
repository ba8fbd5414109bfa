"""What a COGENT item is, and where its rooms and studies draw their questions from: a benchmark's file, named by
its task (``gsm8k``, ``folio``, ``mmlu``), loaded whole and checked when the server or study starts. A room may
also play a question its creator types (the room's own ``typed`` source), which needs no set.

:class:`CogentItem` is the study's view of an item: a benchmark's row with its gold answer. The benchmark the
settings name (``task``) loaded and checked the row with its own model and words it for the prompt
(:meth:`~lexicoord.tasks.benchmarks.Benchmark.render`); the rules read only the answer, so the row's other
fields (a question; premises and a conclusion; a question, its choices and subject) are kept as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from lexicoord.core.items import ItemSource
from lexicoord.errors import ConfigError
from lexicoord.tasks.benchmarks import BENCHMARKS


class CogentItem(BaseModel):
    """A benchmark's row: its gold ``answer`` (as text, as each benchmark compares it) and the benchmark's own
    fields, allowed through untouched for the benchmark to word."""

    model_config = ConfigDict(extra="allow", frozen=True, coerce_numbers_to_str=True)

    id: str | None = None
    answer: str

    def row(self) -> dict[str, Any]:
        """The item as its benchmark reads it: every field, the benchmark's own included."""
        return self.model_dump(mode="json")


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
