"""What a debate episode's item is: the study's view of a robot instruction on a scene.

The task's :class:`~lexicoord.tasks.instructions.Instruction` loads and checks a dataset's lines; this is what
the rules read of one: the scene and the instruction every seat sees, and whether it is ambiguous and where (the
optional judge's answer key). A gate's check plays the study on an item of its own making, a scene and an
instruction alone. Every other key (the task's type, subtype and pair) is ignored here and kept in the stored
episode, where the task's score and the statistics read it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.tasks.tabletop import Slot


class DebateItem(BaseModel):
    """A scene and an instruction on it; ``slot`` is the vague part of an ambiguous one (none: clear, or unknown)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = None
    context: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    ambiguous: bool = False
    slot: Slot | None = None
