"""What a gate's check is, as its protocol reads it: the instruction, what surrounds it, the readings offered.

A check is made by the gate itself (an HTTP or MCP request, already checked there) or by an evaluation
(:meth:`~lexicoord.tasks.asking.AskingItem.gate_item`), whose ``gold`` holds what only the simulated person and
the scorer read. The stored episode keeps the item as it was made.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class GateItem(BaseModel):
    """One check: ``candidates`` are the caller's readings (none: the gate lists them), ``timeout`` the caller's
    deadline in seconds (none: the settings'), ``gold`` an evaluation's answer key (none: a real check)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = None
    instruction: str = Field(min_length=1)
    context: str = ""
    candidates: list[str] | None = None
    timeout: float | None = Field(default=None, gt=0)
    gold: dict[str, Any] | None = None
