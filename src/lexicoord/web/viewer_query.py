"""What a run-viewer request asks for: page sizes, cursors and episode filters, read from its query string.

Every page is cut by a cursor (the last key shown), never by an offset, so a page deep in a run of
100,000 events costs what the first one does and rows written meanwhile never shift a page. A
malformed value is refused with one sentence (:class:`BadQuery`) rather than guessed at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from lexicoord.runs.store import CONFLICT, PLAYING, Scalar

#: Episodes per page (default, most), and events per page.
EPISODES_PAGE, EPISODES_MAX = 50, 200
EVENTS_PAGE, EVENTS_MAX = 100, 500
#: Runs per page of the run list.
RUNS_PAGE, RUNS_MAX = 50, 200
#: Episode statuses a page may filter on: ended episodes, a live room's games still being played, and second
#: saves of an ended episode kept beside it.
STATUSES = ("done", "failed", PLAYING, CONFLICT)


class BadQuery(ValueError):
    """A query string the viewer cannot read; its message says which value and why."""


def page_size(raw: str | None, default: int, most: int) -> int:
    if raw is None or raw == "":
        return default
    try:
        n = int(raw)
    except ValueError:
        raise BadQuery(f"limit must be a whole number, not {raw[:40]!r}.") from None
    if not 1 <= n <= most:
        raise BadQuery(f"limit must be between 1 and {most}.")
    return n


def seq_cursor(raw: str | None, name: str) -> int | None:
    """An event cursor: the ``seq`` the page starts after (or ends before)."""
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadQuery(f"{name} must be an event number, not {raw[:40]!r}.") from None


def episode_cursor(raw: str | None, name: str) -> tuple[int, int] | None:
    """An episode cursor ``POSITION:ID`` (grid position first: episodes read in the order they were dealt)."""
    if raw is None or raw == "":
        return None
    position, sep, ident = raw.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(position), int(ident)
    except ValueError:
        raise BadQuery(f"{name} must be POSITION:ID, not {raw[:40]!r}.") from None


def run_cursor(raw: str | None) -> tuple[float, str] | None:
    """A run-list cursor ``CREATED:NAME`` (the list is newest first)."""
    if raw is None or raw == "":
        return None
    created, sep, name = raw.partition(":")
    try:
        if not sep or not name:
            raise ValueError
        return float(created), name
    except ValueError:
        raise BadQuery(f"after must be CREATED:RUN, not {raw[:40]!r}.") from None


def scalar(raw: str) -> Scalar:
    """A filter value as the JSON it is (``true``, ``3``, ``null``), else the text itself."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if value is None or isinstance(value, str | int | float | bool) else raw


def pairs(values: list[str], name: str) -> dict[str, Scalar]:
    """``KEY=VALUE`` filters (repeatable) as a mapping."""
    out: dict[str, Scalar] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadQuery(f"{name} filters are KEY=VALUE, not {item[:60]!r}.")
        out[key.strip()] = scalar(value)
    return out


@dataclass(frozen=True)
class EpisodeFilter:
    """Which episodes of a run a page lists: by status, outcome fields and spec settings."""

    status: str | None = None
    outcome: dict[str, Scalar] = field(default_factory=dict)
    settings: dict[str, Scalar] = field(default_factory=dict)

    @classmethod
    def read(cls, status: str | None, outcome: list[str], settings: list[str]) -> EpisodeFilter:
        if status in ("", None):
            status = None
        elif status not in STATUSES:
            raise BadQuery(f"status must be one of {', '.join(STATUSES)}.")
        return cls(status=status, outcome=pairs(outcome, "outcome"), settings=pairs(settings, "setting"))
