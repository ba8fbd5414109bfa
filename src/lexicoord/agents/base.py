"""What every participant has: a name, a kind, and whether it stands in for a person."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AgentSpec(BaseModel):
    """One seat of a line-up, as written in a config file or on the command line.

    ``kind`` is ``llm`` (needs ``model``), ``human`` (a person at a seat), or a
    protocol's own kind (``simulated``, ``symbolic``...). ``options`` carries
    per-agent settings (temperature, policy, persona...).
    """

    name: str
    kind: str = "llm"
    model: str | None = None
    role: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class Agent:
    """Base of all participants. ``simulated`` marks agents that stand in for a person."""

    kind: str = "agent"
    simulated: bool = False

    def __init__(self, name: str, role: str | None = None) -> None:
        self.name = name
        self.role = role

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "role": self.role, "simulated": self.simulated}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
