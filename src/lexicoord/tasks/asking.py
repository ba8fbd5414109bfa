"""Instructions whose intent a person knows: the items of the field's ask-before-acting benchmarks.

KnowNo's tasks (:mod:`lexicoord.tasks.knowno`) and AmbiK's (:mod:`lexicoord.tasks.ambik`) load into one model,
so the gate's evaluation, the debate and the coalition read them alike. The item keeps apart what a seat may
see (the scene, the instruction, the readings offered) from what only the simulated person and the scorer may
read (the intent, the gold answer, the ambiguous element): :meth:`AskingItem.gate_item` puts the second under
``gold``, which no policy's prompt reads.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.tasks.instructions import Instruction
from lexicoord.tasks.jsonl import DatasetError, LineError
from lexicoord.tasks.tabletop import Slot

__all__ = ["AskingItem", "Loaded", "Skips", "normalise", "names"]

_WORD = re.compile(r"[^\w']+")
_ARTICLES = frozenset({"a", "an", "the"})


def normalise(text: str) -> str:
    """Lower case, punctuation and articles out, one space between words: how two namings of one thing meet."""
    return " ".join(w for w in _WORD.sub(" ", text.casefold()).split() if w not in _ARTICLES)


def names(text: str, thing: str) -> bool:
    """Whether ``text`` names ``thing`` as whole words (case, punctuation and articles ignored)."""
    t, n = f" {normalise(text)} ", normalise(thing)
    return bool(n) and f" {n} " in t


class Skips(Counter[str]):
    """What a loader left out, by reason: a reader sees how many rows became items and why the others did not."""

    def line(self) -> str:
        return "; ".join(f"{n} {reason}" for reason, n in self.most_common()) or "nothing"


class AskingItem(BaseModel):
    """One instruction of a benchmark, what a person meant by it, and whether it needs a question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    #: ``knowno`` or ``ambik``: which benchmark's success rule scores it.
    benchmark: str
    instruction: str = Field(min_length=1, max_length=4000)
    #: The scene as the seats read it.
    context: str = Field(default="", max_length=8000)
    #: Whether the benchmark says the instruction needs a question (its possible readings are not all intended).
    ambiguous: bool
    #: The benchmark's ambiguity type or task category (KnowNo's ``singlelabel_task``, AmbiK's ``preferences``).
    category: str
    #: Readings offered to the seats (empty: the gate writes its own).
    options: list[str] = Field(default_factory=list)
    #: The options the person means (a subset of ``options``).
    intended: list[str] = Field(default_factory=list)
    #: The intent in words (KnowNo: the intended readings; AmbiK: ``user_intent``).
    intent: str = ""
    #: AmbiK's intent elements, as its success rule reads them (``-x``: must not appear; ``a|b``: either).
    intent_elements: list[str] = Field(default_factory=list)
    #: The options the ambiguity is between (KnowNo: the possible readings; AmbiK: those naming the shortlist).
    ambiguous_set: list[str] = Field(default_factory=list)
    #: The words of the ambiguous element (KnowNo's possible objects or locations; AmbiK's shortlist or variants).
    element: list[str] = Field(default_factory=list)
    #: AmbiK's clarifying question and its answer.
    question: str | None = None
    answer: str | None = None
    #: The other item of an ambiguous/unambiguous pair (AmbiK), for paired comparisons.
    pair: str | None = None
    #: Where it was read: ``FILE:LINE``.
    source: str = ""

    def gate_item(self) -> dict[str, Any]:
        """The gate's item: what the seats may see, and under ``gold`` what only the person and the scorer read."""
        gold = self.model_dump(exclude={"instruction", "context", "options"})
        return {"id": self.id, "instruction": self.instruction, "context": self.context,
                "candidates": list(self.options), "gold": gold}

    def as_instruction(self) -> Instruction:
        """The item as the debate study's instruction; the ambiguous element becomes the slot its rule scores by."""
        slot = None
        if self.ambiguous and self.element:
            cues = [e for e in dict.fromkeys(normalise(e) for e in self.element) if e][:40]
            slot = Slot(name="element", vague=self.instruction[:80], ask_about=f"which of: {', '.join(self.element)}"[:300],
                        cues=cues or [self.element[0][:80]])
        return Instruction(id=self.id, instruction=self.instruction, ambiguous=self.ambiguous, type=self.category[:40],
                           context=self.context or "(no scene given)", slot=slot, pair=self.pair)


class Loaded(BaseModel):
    """A loader's result: the items, and what it skipped and why."""

    items: list[AskingItem]
    skipped: dict[str, int] = Field(default_factory=dict)


def collect(rows: Iterable[AskingItem | LineError], source: str, skips: Skips, limit: int | None = None) -> Loaded:
    """Items from a loader's stream; every bad row is reported together, by line (none of them is dropped)."""
    items: list[AskingItem] = []
    errors: list[LineError] = []
    for row in rows:
        if isinstance(row, LineError):
            errors.append(row)
        elif limit is None or len(items) < limit:
            items.append(row)
        if limit is not None and len(items) >= limit and not errors:
            break
    if errors:
        raise DatasetError(source, errors)
    return Loaded(items=items, skipped=dict(skips))



SCHEMES = ("knowno", "ambik")


def load_asking(source: str, *, limit: int | None = None) -> Loaded:
    """``knowno:PATH`` (a task file or a folder of them) or ``ambik:PATH`` (an AmbiK CSV; ``ambik-indirect:PATH``
    takes each pair's ``unambiguous_indirect`` twin), read up to ``limit`` items."""
    from pathlib import Path

    from lexicoord.errors import ConfigError

    scheme, sep, path = source.partition(":")
    if not sep or scheme not in (*SCHEMES, "ambik-indirect"):
        raise ConfigError(f"Unknown benchmark source {source!r}: use knowno:PATH or ambik:PATH.")
    if scheme == "knowno":
        from lexicoord.tasks.knowno import load_knowno

        return load_knowno(Path(path), limit=limit)
    from lexicoord.tasks.ambik import load_ambik

    return load_ambik(Path(path), limit=limit, twin="indirect" if scheme == "ambik-indirect" else "direct")
