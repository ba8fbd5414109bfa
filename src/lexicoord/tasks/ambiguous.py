"""Ambiguous-word items for the coordination game, and the loaders for them.

An item is a sentence, the ambiguous word (or short phrase) in it, the candidate
meanings as short glosses, and the meaning the sentence settles, if it does.
Files load through :mod:`lexicoord.tasks.jsonl`: every bad line is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lexicoord.tasks import jsonl
from lexicoord.tasks.base import Task
from lexicoord.tasks.jsonl import DatasetError, LineError

__all__ = ["TASK", "AmbiguityItem", "AmbiguousWords", "DatasetError", "LineError", "builtin_items", "load_jsonl",
           "parse_jsonl", "word_span"]

MAX_SENTENCE_CHARS = 2000
MAX_GLOSS_CHARS = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class AmbiguityItem(BaseModel):
    """One ambiguous word in context. ``intended`` is ``None`` when the sentence leaves it open."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    sentence: str = Field(min_length=3, max_length=MAX_SENTENCE_CHARS)
    word: str = Field(min_length=1, max_length=80)
    options: list[str] = Field(min_length=2, max_length=5)
    intended: str | None = None
    open: bool = False
    category: Literal["homonym", "polysemy", "domain", "wsd"] = "homonym"
    domain: str = "general"
    note: str = ""

    @field_validator("word", "sentence", "intended")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        if _CONTROL.search(value):
            raise ValueError("must be one line without control characters")
        return value

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: list[str]) -> list[str]:
        cleaned = [o.strip() for o in options]
        if any(not o or len(o) > MAX_GLOSS_CHARS for o in cleaned):
            raise ValueError(f"every option must be 1 to {MAX_GLOSS_CHARS} characters")
        if any(_CONTROL.search(o) for o in cleaned):
            raise ValueError("options must be one line without control characters")
        if len({o.casefold() for o in cleaned}) != len(cleaned):
            raise ValueError("options must be distinct")
        return cleaned

    @model_validator(mode="after")
    def _consistent(self) -> AmbiguityItem:
        if not word_span(self.sentence, self.word):
            raise ValueError(f"the word {self.word!r} does not occur in the sentence")
        if self.intended is not None and self.intended not in self.options:
            raise ValueError(f"intended {self.intended!r} is not one of the options")
        if self.open != (self.intended is None):
            raise ValueError("'open' must be true exactly when 'intended' is null")
        return self

    def as_task(self) -> dict[str, Any]:
        return self.model_dump()


def word_span(sentence: str, word: str) -> tuple[int, int] | None:
    """Where ``word`` occurs in ``sentence`` as whole words (case-insensitive), or ``None``."""
    match = re.search(rf"(?<!\w){re.escape(word.strip())}(?!\w)", sentence, re.IGNORECASE)
    return match.span() if match else None


def parse_jsonl(lines: Iterable[str], source: str, *, keep_going: bool = False) -> tuple[list[AmbiguityItem], list[LineError]]:
    """Items and bad lines. Raises :class:`DatasetError` on any bad line unless ``keep_going``."""
    return jsonl.parse_jsonl(lines, source, AmbiguityItem, keep_going=keep_going)


def load_jsonl(path: str | Path, *, keep_going: bool = False) -> tuple[list[AmbiguityItem], list[LineError]]:
    """Items from a JSONL file of :class:`AmbiguityItem` objects (see docs/dataset.md)."""
    return parse_jsonl(jsonl.read_lines(path), str(path), keep_going=keep_going)


BUILTIN = "ambiguous_sentences.jsonl"


def builtin_items() -> list[AmbiguityItem]:
    """The dataset written for this project (docs/dataset.md)."""
    text = (resources.files("lexicoord") / "data" / BUILTIN).read_text(encoding="utf-8")
    return parse_jsonl(text.splitlines(), f"built-in {BUILTIN}")[0]


class AgreedMeaning(Protocol):
    """What the task scores of a game's outcome (the coordination game's outcome has it)."""

    @property
    def converged(self) -> bool: ...
    @property
    def interpretation(self) -> str | None: ...


class AmbiguousWords(Task[AmbiguityItem, AgreedMeaning]):
    """Ambiguous words in context, for the coordination game.

    Sources: ``builtin`` (the project's own 285 items), ``coarsewsd:FOLDER``
    (CoarseWSD-20's word-sense format), ``wictsv:FOLDER`` (WiC-TSV's training split), a JSONL file, or ``hf:...``. Score: the
    converged meaning is the one the sentence settles; ``None`` for open items.
    """

    name = "ambiguous-words"
    item_model = AmbiguityItem

    def __init__(self) -> None:
        #: What a named source's loader skipped, and why, by source (read after loading it; a run prints it).
        self.skipped: dict[str, str] = {}

    def load(self, source: str) -> list[AmbiguityItem]:
        own = self._own(source)
        return own if own is not None else super().load(source)

    def index(self, source: str, keep: Callable[[AmbiguityItem], bool] | None = None) -> Sequence[AmbiguityItem]:
        own = self._own(source)
        if own is not None:
            return [i for i in own if keep is None or keep(i)]
        return super().index(source, keep)

    def _own(self, source: str) -> list[AmbiguityItem] | None:
        """The task's own named sources (``builtin``, ``coarsewsd:FOLDER``, ``wictsv:FOLDER``), or ``None`` for a
        file or the hub."""
        if source == "builtin":
            return builtin_items()
        if source.startswith("coarsewsd:"):
            from lexicoord.tasks.coarsewsd import load_coarsewsd

            return load_coarsewsd(Path(source.removeprefix("coarsewsd:")))
        if source.startswith("wictsv:"):
            from lexicoord.tasks.asking import Skips
            from lexicoord.tasks.wictsv import load_wictsv

            skips = Skips()
            items = load_wictsv(Path(source.removeprefix("wictsv:")), skips=skips)
            self.skipped[source] = skips.line()
            return items
        return None

    def score(self, item: dict[str, Any], outcome: AgreedMeaning) -> bool | None:
        if not item.get("intended"):
            return None
        return outcome.converged and outcome.interpretation == item["intended"]


TASK = AmbiguousWords()
