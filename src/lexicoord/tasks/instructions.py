"""Robot instructions to judge: one scene, one instruction, and whether (and where) it is ambiguous.

A run plays single instructions. A file may hold generated pairs (one line
with both twins, as ``lexicoord debate generate`` writes) or a user's own
instructions, one per line::

    {"id": "r1", "instruction": "Hand me the thing.", "ambiguous": true, "type": "attribute",
     "context": "...", "slot": {"name": "noun", "vague": "thing", "ask_about": "which object", "cues": ["which"]}}

``context`` defaults to the tabletop scene; ``slot`` is needed only to score an
ambiguous instruction by rule (an LLM judge needs ``ask_about`` at least).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lexicoord.tasks import clarifying, jsonl
from lexicoord.tasks.base import Task
from lexicoord.tasks.jsonl import LineError
from lexicoord.tasks.tabletop import SCENE, InstructionPair, Slot, generate


class Instruction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    instruction: str = Field(min_length=3, max_length=1000)
    ambiguous: bool
    type: str = Field(default="other", min_length=1, max_length=40)
    subtype: str = Field(default="", max_length=40)
    context: str = Field(default=SCENE, min_length=1, max_length=4000)
    slot: Slot | None = None
    pair: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _slot_only_when_ambiguous(self) -> Instruction:
        if self.slot is not None and not self.ambiguous and self.pair is None:
            raise ValueError("an unambiguous instruction has no ambiguous slot")
        return self

    def as_task(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def twins(pair: InstructionPair, *, unambiguous: bool = True) -> list[Instruction]:
    """The ambiguous instruction of a pair and, unless asked not to, its unambiguous twin."""
    common = {"type": pair.type, "subtype": pair.subtype, "context": pair.context, "slot": pair.slot, "pair": pair.id}
    out = [Instruction(id=f"{pair.id}/ambiguous", instruction=pair.ambiguous, ambiguous=True, **common)]
    if unambiguous:
        out.append(Instruction(id=f"{pair.id}/unambiguous", instruction=pair.unambiguous, ambiguous=False, **common))
    return out


def _line(data: dict[str, Any]) -> InstructionPair | Instruction:
    if "instruction" in data:
        return Instruction.model_validate(data)
    if "unambiguous" in data and isinstance(data.get("ambiguous"), str):
        return InstructionPair.model_validate(data)
    raise ValidationError.from_exception_data(
        "Instruction", [{"type": "missing", "loc": ("instruction",), "input": data}]
    )


def parse_instructions(
    lines: Iterable[str], source: str, *, unambiguous: bool = True, keep_going: bool = False
) -> tuple[list[Instruction], list[LineError]]:
    """Instructions from JSONL lines of pairs or single instructions (mixed is fine); ids stay unique."""
    rows, errors = jsonl.parse_jsonl(lines, source, _line, keep_going=keep_going)
    out: list[Instruction] = []
    for row in rows:
        out.extend(twins(row, unambiguous=unambiguous) if isinstance(row, InstructionPair) else [row])
    ids = [i.id for i in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise jsonl.DatasetError(source, [LineError(line=0, reason=f"instruction id {dup!r} occurs twice after expanding pairs")])
    return out, errors


def load_instructions(path: str | Path, *, unambiguous: bool = True) -> list[Instruction]:
    return RobotInstructions(unambiguous=unambiguous).load(str(path))


def asks_about(question: str, cues: Iterable[str]) -> bool:
    """Whether ``question`` contains one of ``cues`` as whole words (case, punctuation, articles, plural -s ignored)."""
    return clarifying._any(clarifying.prepared(question, ""), cues)


def judgeable(item: dict[str, Any]) -> bool:
    """Whether the rule can score an ambiguous item: its slot is one the rule knows, or it brings cues."""
    slot = item.get("slot") or {}
    return bool(slot.get("cues")) or slot.get("name") in clarifying.QUESTIONING


def question_kind(item: dict[str, Any], verdict: str | None, question: str) -> clarifying.Asked | None:
    """What an ambiguous item's final question asks about (:func:`clarifying.classify`); ``None`` when
    the item is not ambiguous or gives nothing to judge by, ``none`` when no question was asked."""
    if not item.get("ambiguous") or not judgeable(item):
        return None
    if verdict != "ambiguous" or not question:
        return "none"
    return clarifying.classify(question, item.get("slot") or {}, str(item.get("instruction", "")))


def rule_success(item: dict[str, Any], verdict: str | None, question: str) -> bool | None:
    """The stricter measure's verdict on one final answer: on an ambiguous item, the verdict is
    ``ambiguous`` and the question asks about the ambiguous slot and no other; on an unambiguous
    one, the verdict is ``clear``. ``None`` when the item gives nothing to judge by."""
    if not item.get("ambiguous"):
        return verdict == "clear"
    kind = question_kind(item, verdict, question)
    return None if kind is None else kind == "slot"


class FinalAnswer(Protocol):
    """What the task scores of an episode's outcome (the debate study's outcome has it)."""

    @property
    def termination(self) -> str: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def question(self) -> str: ...


class RobotInstructions(Task[Instruction, FinalAnswer]):
    """Robot instructions on a scene, for the debate study.

    Sources: a JSONL file of generated pairs (both twins, unless
    ``unambiguous=False``) and/or single instructions, ``knowno:PATH`` or ``ambik:PATH``, or ``hf:...``. Score: the
    rule's measure (:func:`rule_success`): the final question asks about the ambiguous slot
    and no other. The paper's own measure, detection, is the verdict alone (see the analysis).
    """

    name = "robot-instructions"
    item_model = Instruction

    def __init__(self, *, unambiguous: bool = True) -> None:
        self.unambiguous = unambiguous

    def parse(self, lines: Iterable[str], source: str) -> list[Instruction]:
        return parse_instructions(lines, source, unambiguous=self.unambiguous)[0]

    def load(self, source: str) -> list[Instruction]:
        """A benchmark's instructions (``knowno:PATH``, ``ambik:PATH``: the ambiguous element becomes the slot the
        rule scores by), or a JSONL file or ``hf:...``."""
        from lexicoord.tasks.asking import SCHEMES, load_asking

        if source.partition(":")[0] in (*SCHEMES, "ambik-indirect"):
            items = load_asking(source).items
            return [i.as_instruction() for i in items if self.unambiguous or i.ambiguous]
        return super().load(source)

    def score(self, item: dict[str, Any], outcome: FinalAnswer) -> bool | None:
        if outcome.termination == "error":
            return False
        return rule_success(item, outcome.verdict, outcome.question)


TASK = RobotInstructions()


def generated_instructions(per_category: int, seed: int = 0, *, unambiguous: bool = True) -> list[Instruction]:
    return [i for pair in generate(per_category, seed) for i in twins(pair, unambiguous=unambiguous)]
