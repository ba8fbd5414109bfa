"""A person in a room: a name, a secret token's hash, and the pages they have open."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lexicoord.web.connection import Connection


@dataclass(eq=False)
class Person:
    name: str
    token_hash: str
    joined_at: float = field(default_factory=time.time)
    absent: bool = False
    #: A study's participant id (kept with the seat in every game's record; never shown to the others).
    participant: str | None = None
    connections: set[Connection] = field(default_factory=set)
    #: Since when the person has had no open page (not saved: after a restart everyone starts away).
    away_since: float | None = field(default_factory=time.time)
