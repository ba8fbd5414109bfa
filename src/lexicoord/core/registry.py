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

from importlib import import_module
from typing import Any

from pydantic import BaseModel, ConfigDict

from lexicoord.core.plugins import Registry
from lexicoord.core.protocol import Protocol
from lexicoord.errors import ConfigError

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
    #: ``module:function`` giving each finished episode's outcome for ``lexicoord compare``:
    #: ``f(rows) -> Iterable[lexicoord.analysis.compare.Outcome]`` (its item and cell, right or wrong, rounds, tokens).
    outcomes: str | None = None
    #: ``module:function`` writing the report of a stored run: ``f(store, run, out_dir) -> Report``.
    report: str | None = None
    #: ``module:class`` of the live-room adapter, when people can play it in a browser.
    room: str | None = None
    #: ``module:attribute`` of the protocol's experiment plan (a :class:`~lexicoord.experiments.experiment.Plan`),
    #: which reads an experiment file for ``lexicoord run FILE``.
    experiment: str | None = None
    #: ``module:attribute`` of the protocol's command group (a ``typer.Typer``), mounted as ``lexicoord NAME``.
    cli: str | None = None
    #: Other names the command group answers to (hidden from ``--help``), such as a short form.
    aliases: tuple[str, ...] = ()

    def load(self, what: str) -> Any:
        """The object named by the ``task``, ``statistics``, ``outcomes``, ``report``, ``room``, ``experiment`` or
        ``cli`` field."""
        target = getattr(self, what)
        if not target:
            raise ConfigError(f"Protocol '{self.name}' has no {what}.")
        module, _, attr = target.partition(":")
        return getattr(import_module(module), attr)


_registry: Registry[ProtocolEntry] = Registry("protocol", PROTOCOLS_GROUP)
#: The registered protocols themselves (not a copy), as they stand: plugins loaded or not.
_protocols = _registry.entries


def register_protocol(entry: ProtocolEntry) -> None:
    _registry.register(entry.name, entry)


def load_protocols() -> None:
    """Run every installed ``register()`` once; one that fails is noted and the others still load."""
    _registry.load()


def protocols() -> dict[str, ProtocolEntry]:
    return _registry.all()


def failed_protocols() -> dict[str, str]:
    return _registry.failed()


def get_protocol(name: str) -> ProtocolEntry:
    return _registry.get(name)
