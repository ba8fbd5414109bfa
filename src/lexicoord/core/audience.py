"""Who may see an event: everyone, a named group (the wolves), or named seats.

Every prompt and every page is built from :func:`visible` alone, so a secret
reaches a seat only if its event names that seat's audience. A seat is known by
its name and the groups the protocol put it in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from lexicoord.core.events import Event


class Audience(BaseModel):
    """``everyone``; ``group`` (every seat in the named groups); or ``agents`` (the named seats)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["everyone", "group", "agents"] = "everyone"
    groups: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()

    @classmethod
    def group(cls, *names: str) -> Audience:
        return cls(kind="group", groups=tuple(names))

    @classmethod
    def only(cls, *names: str | None) -> Audience:
        return _only(cls, tuple(n for n in names if n))

    @property
    def public(self) -> bool:
        return self.kind == "everyone"

    def describe(self) -> str:
        """Who, in words: ``everyone``, ``the wolves``, ``A and B``."""
        if self.kind == "everyone":
            return "everyone"
        names = list(self.groups if self.kind == "group" else self.agents)
        said = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names) or "nobody"
        return f"the {said}" if self.kind == "group" else said


EVERYONE = Audience()


@lru_cache(maxsize=1024)  # frozen, and asked for on every private event: one per seat is enough
def _only(cls: type[Audience], agents: tuple[str, ...]) -> Audience:
    return cls(kind="agents", agents=agents)


class Viewer(BaseModel):
    """Who is looking: a seat by name with its groups, or a spectator (name ``None``: public events only)."""

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    groups: frozenset[str] = Field(default_factory=frozenset)
    #: After a game, a spectator may be shown everything (the protocol decides when).
    omniscient: bool = False


@lru_cache(maxsize=4096)  # frozen, and asked for before every prompt a seat is shown
def seat_viewer(name: str | None, groups: frozenset[str] = frozenset()) -> Viewer:
    """The viewer for seat ``name`` in ``groups``."""
    return Viewer(name=name, groups=groups)


def can_see(viewer: Viewer, audience: Audience) -> bool:
    if viewer.omniscient or audience.kind == "everyone":
        return True
    if audience.kind == "group":
        return bool(viewer.groups.intersection(audience.groups))
    return viewer.name is not None and viewer.name in audience.agents


def visible(events: Iterable[Event], viewer: Viewer) -> Iterator[Event]:
    """The events ``viewer`` may see, in order: the one function every prompt and page is built from."""
    return (e for e in events if can_see(viewer, e.audience))
