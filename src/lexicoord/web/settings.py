"""What every room is created with, checked at the boundary.

A protocol's room adapter extends :class:`RoomSettings` with its own fields.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lexicoord.errors import ConfigError

if TYPE_CHECKING:
    from lexicoord.web.services import Services

NAME = re.compile(r"^[\w][\w .'\-]{0,23}$", re.UNICODE)


def clean_name(text: str) -> str:
    """A display name: one line, 1 to 24 letters, digits, spaces and . ' - _."""
    name = " ".join(text.split())
    if not NAME.match(name):
        raise ValueError("a name is 1 to 24 letters, digits, spaces, or . ' - _, starting with a letter or digit")
    return name


class AgentSeat(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=24)
    model: str = Field(max_length=200)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return clean_name(v)


class RoomSettings(BaseModel):
    """What every room has, whatever it plays; the same for every game played in it."""

    model_config = ConfigDict(extra="forbid")
    protocol: str = Field(default="coordination", max_length=60)
    agents: list[AgentSeat] = Field(default_factory=list, max_length=8)
    seat_timeout: float = Field(default=120.0, ge=10, le=3600, description="Seconds a person has for each move.")
    agent_timeout: float = Field(default=60.0, ge=1, le=600, description="Seconds a model agent has for each move.")
    temperature: float = Field(default=0.7, ge=0, le=2)
    max_people: int = Field(default=8, ge=1, le=16)
    seed: int = Field(default=0, ge=0)

    @field_validator("agents")
    @classmethod
    def _distinct(cls, v: list[AgentSeat]) -> list[AgentSeat]:
        names = [a.name.lower() for a in v]
        if len(set(names)) != len(names):
            raise ValueError("two agents have the same name")
        return v

    # The form's concerns, beside its fields: what the operator offers, what it refuses, what a run records.
    @classmethod
    def choices(cls, services: Services) -> dict[str, list[Any]]:
        """Values the operator offers for this model's own fields (the datasets served, say), by field: the
        start page offers these and nothing else, and :meth:`check` refuses anything else."""
        return {}

    def check(self, services: Services) -> None:
        """Refuse what the operator did not offer (a dataset, a model): ``ConfigError``. Every room's agents sit
        on served models only; a subclass checks its own fields and calls this."""
        unknown = sorted({a.model for a in self.agents} - set(services.model_names))
        if unknown:
            raise ConfigError(f"Model {unknown[0]} is not offered by this server; choose one of: "
                              f"{', '.join(services.model_names)}.")

    def check_table(self, seats: list[str]) -> None:
        """Refuse (``ConfigError``) a table of these seats the game cannot be dealt for; any table by default. A
        room asks at each start; a study asks before it serves, for the table its groups will have."""

    def run_config(self) -> dict[str, Any]:
        """What the room's run records as its settings (``lexicoord report`` reads it)."""
        return {"settings": self.model_dump(mode="json")}
