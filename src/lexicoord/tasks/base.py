"""What a task is: where its items come from, how each is checked, and how an outcome is scored.

Items load from a local file (JSONL, checked line by line: every bad line is
reported with its number and the load stops), from a task's own named sources
(``builtin``, ``coarsewsd:FOLDER``, ``wictsv:FOLDER`` ...), or from a Hugging Face dataset id
(``hf:NAME[:CONFIG][@SPLIT]``) when the optional ``datasets`` package is
installed and the machine is online. Nothing is ever downloaded otherwise:
tests and the default path read local files only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from lexicoord.errors import ConfigError
from lexicoord.tasks import jsonl
from lexicoord.tasks.indexed import index_jsonl
from lexicoord.tasks.jsonl import DatasetError, LineError

ItemT = TypeVar("ItemT", bound=BaseModel)
T = TypeVar("T")
OutcomeT = TypeVar("OutcomeT", contravariant=True)
HUB = "hf:"


def stratified(items: Sequence[T], n: int | None, kind: Callable[[T], str]) -> list[T]:
    """``n`` items taken in turn from each kind (file order within a kind), so a small sample covers every kind;
    all of them, in file order, when ``n`` is ``None``."""
    if n is None:
        return list(items)
    by: dict[str, list[T]] = {}
    for item in items:
        by.setdefault(kind(item), []).append(item)
    out: list[T] = []
    for depth in range(max((len(v) for v in by.values()), default=0)):
        out.extend(group[depth] for group in by.values() if depth < len(group))
    return out[:n]


def parse_hub_ref(ref: str) -> tuple[str, str | None, str]:
    """``NAME[:CONFIG][@SPLIT]`` (split ``test`` by default)."""
    ref, _, split = ref.partition("@")
    name, _, config = ref.partition(":")
    if not name:
        raise ConfigError(f"'{HUB}{ref}' names no dataset; write {HUB}NAME[:CONFIG][@SPLIT].")
    return name, config or None, split or "test"


class Task(ABC, Generic[ItemT, OutcomeT]):
    """Subclasses set ``name`` and ``item_model`` and implement :meth:`score` on the protocol's typed outcome
    (described structurally, so a task never imports the protocol that plays it)."""

    name: ClassVar[str]
    item_model: ClassVar[type[BaseModel]]

    def load(self, source: str) -> list[ItemT]:
        """Items from ``source``: ``hf:...``, a task's own named source, or a local JSONL file."""
        if source.startswith(HUB):
            return self.load_hub(source.removeprefix(HUB))
        return self.load_file(source)

    def load_file(self, path: str) -> list[ItemT]:
        return self.parse(jsonl.read_lines(path), path)

    def index(self, source: str, keep: Callable[[ItemT], bool] | None = None) -> Sequence[ItemT]:
        """The items of ``source`` that ``keep`` accepts, checked as :meth:`load` checks them; a local file's
        are held as an index into it (:mod:`lexicoord.tasks.indexed`) and read when used, so that choosing a
        few items of a large file does not hold all of them in memory."""
        if source.startswith(HUB):
            return [i for i in self.load(source) if keep is None or keep(i)]
        return index_jsonl(source, self.parse_line, keep=keep)

    def parse(self, lines: Iterable[str], source: str) -> list[ItemT]:
        """Items from JSONL lines; any bad line stops the load with its number and reason."""
        return jsonl.parse_jsonl(lines, source, self.parse_line)[0]

    def parse_line(self, data: dict[str, Any]) -> ItemT:
        return self.item_model.model_validate(data)  # type: ignore[return-value]

    def from_hub_row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A hub row as this task's item fields (a benchmark's own columns map here)."""
        return dict(row)

    def load_hub(self, ref: str) -> list[ItemT]:
        name, config, split = parse_hub_ref(ref)
        try:
            import datasets
        except ImportError:
            raise ConfigError(f"Loading '{HUB}{ref}' needs the optional datasets package (pip install datasets); "
                              "or download the file and give its path.") from None
        try:
            rows = datasets.load_dataset(name, config, split=split)
        except Exception as exc:  # offline, unknown id, gated: one sentence, not a traceback
            raise ConfigError(f"Cannot load the dataset '{name}' ({split}) from the hub: {exc}") from None
        items: list[ItemT] = []
        errors: list[LineError] = []
        for number, row in enumerate(rows, start=1):
            try:
                items.append(self.parse_line(self.from_hub_row(row)))
            except ValidationError as exc:
                errors.append(LineError(line=number, reason=jsonl.validation_reason(exc)))
        if errors:
            raise DatasetError(f"{HUB}{ref} (row numbers)", errors)
        return items

    def as_task(self, item: ItemT) -> dict[str, Any]:
        """The item as an episode carries it (and the store keeps it)."""
        return item.model_dump(mode="json")

    @abstractmethod
    def score(self, item: dict[str, Any], outcome: OutcomeT) -> bool | None:
        """Whether the outcome is right for the item; ``None`` when the item gives nothing to judge by."""
