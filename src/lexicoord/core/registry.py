"""The protocols this installation knows, registered the way model providers are.

Each installed package declares an entry point in the ``lexicoord.protocols``
group that names a ``register()`` function; the built-in protocols register
exactly that way. An entry says what a command, the report and the web need to
know: the protocol's rules, its settings and outcome models (on the protocol
class), the task it plays, and where its report and its live-room adapter are.
Statistics, report, room and commands are ``module:attribute`` strings, imported
only when used: the registry mounts them (``lexicoord NAME ...``, ``lexicoord report
RUN``, the start page's offer and ``/adapters/NAME.js``), so a protocol installed
from another distribution gets all of them with no line of lexicoord changed.
"""

from __future__ import annotations

import logging
import threading
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel, ConfigDict

from lexicoord.core.protocol import Protocol
from lexicoord.errors import ConfigError

log = logging.getLogger(__name__)
PROTOCOLS_GROUP = "lexicoord.protocols"


class ProtocolEntry(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str
    summary: str
    #: What people call it (the start page's title); by default the summary's head.
    title: str | None = None
    protocol: type[Protocol]
    #: ``module:attribute`` of the :class:`~lexicoord.tasks.base.Task` the protocol plays.
    task: str | None = None
    #: ``module:function`` computing the protocol's statistics from a run's stored episodes and events:
    #: ``f(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> BaseModel`` (events only: no re-run needed).
    statistics: str | None = None
    #: ``module:function`` writing the report of a stored run: ``f(store, run, out_dir) -> Report``.
    report: str | None = None
    #: ``module:class`` of the live-room adapter, when people can play it in a browser.
    room: str | None = None
    #: ``module:attribute`` of the protocol's command group (a ``typer.Typer``), mounted as ``lexicoord NAME``.
    cli: str | None = None
    #: Other names the command group answers to (hidden from ``--help``), such as a short form.
    aliases: tuple[str, ...] = ()

    def load(self, what: str) -> Any:
        """The object named by the ``task``, ``statistics``, ``report``, ``room`` or ``cli`` field."""
        target = getattr(self, what)
        if not target:
            raise ConfigError(f"Protocol '{self.name}' has no {what}.")
        module, _, attr = target.partition(":")
        return getattr(import_module(module), attr)


_protocols: dict[str, ProtocolEntry] = {}
_failed: dict[str, str] = {}
_loaded = False
_loading = threading.RLock()


def register_protocol(entry: ProtocolEntry) -> None:
    _protocols[entry.name] = entry


def load_protocols() -> None:
    """Run every installed ``register()`` once; one that fails is noted and the others still load."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if _loaded:
            return
        for ep in entry_points(group=PROTOCOLS_GROUP):
            try:
                ep.load()()
            except Exception as exc:  # a broken plugin must not take the built-ins down with it
                _failed[ep.name] = f"{type(exc).__name__}: {exc}"
                log.warning("protocol plugin %s failed to load: %s", ep.name, exc)
        _loaded = True


def protocols() -> dict[str, ProtocolEntry]:
    load_protocols()
    return dict(_protocols)


def failed_protocols() -> dict[str, str]:
    load_protocols()
    return dict(_failed)


def get_protocol(name: str) -> ProtocolEntry:
    load_protocols()
    try:
        return _protocols[name]
    except KeyError:
        known = ", ".join(sorted(_protocols)) or "none"
        raise ConfigError(f"No protocol '{name}' is installed; known: {known}.") from None
