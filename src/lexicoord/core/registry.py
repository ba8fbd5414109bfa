"""The protocols this installation knows, registered the way model providers are.

Each installed package declares an entry point in the ``lexicoord.protocols``
group that names a ``register()`` function; the built-in protocols register
exactly that way. An entry says what a command, the report and the web need to
know: the protocol's rules, its settings and outcome models (on the protocol
class), the task it plays, and where its report and its live-room adapter are.
Rules, statistics, report, room and commands are ``module:attribute`` strings, imported
only when used (listing the commands, or reporting one protocol's run, imports no other
protocol's rules): the registry mounts them (``lexicoord NAME ...``, ``lexicoord report
RUN``, the start page's offer and ``/adapters/NAME.js``), so a protocol installed
from another distribution gets all of them with no line of lexicoord changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

from lexicoord.core.plugins import Registry
from lexicoord.errors import ConfigError

if TYPE_CHECKING:  # the layers above, and the rules, named for types only: the registry imports none of them
    import typer
    from pydantic import BaseModel

    from lexicoord.analysis.compare import OutcomeReader
    from lexicoord.analysis.report import ReportWriter
    from lexicoord.core.items import ItemSource
    from lexicoord.core.protocol import Protocol
    from lexicoord.experiments.experiment import Plan
    from lexicoord.web.adapters.base import RoomAdapter

#: A protocol's statistics of a run: its stored episodes and events in, the protocol's own statistics model out.
StatisticsReader = Callable[[Iterable[tuple[Any, list[Any]]]], "BaseModel"]

PROTOCOLS_GROUP = "lexicoord.protocols"


@dataclass(frozen=True, kw_only=True)
class ProtocolEntry:
    """What a protocol's package registers (:func:`register_protocol`), checked as it is made.

    A frozen dataclass, not a pydantic model: ``lexicoord --help`` reads every protocol's entry, and importing
    pydantic for that alone was a quarter of its start-up. :meth:`__post_init__` refuses what a pydantic model
    refused (a field of the wrong type, rules that are neither a class nor ``module:Class``) with a
    :class:`~lexicoord.errors.ConfigError` naming the entry and the field.
    """

    name: str
    summary: str
    #: What people call it (the start page's title); by default the summary's head.
    title: str | None = None
    #: ``module:Class`` of the rules (a :class:`~lexicoord.core.protocol.Protocol` subclass), imported when first
    #: used (:meth:`rules`); the class itself is taken too, for a protocol whose module is imported anyway.
    protocol: Any
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
    #: ``module:attribute`` of the protocol's :class:`~lexicoord.core.items.ItemSource`: where its rooms and
    #: studies draw their items from, and how a set of them is named and read.
    items: str | None = None
    #: ``module:attribute`` of the protocol's command group (a ``typer.Typer``), mounted as ``lexicoord NAME``.
    cli: str | None = None
    #: Other names the command group answers to (hidden from ``--help``), such as a short form.
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "protocol":
                self._check_rules(value)
            elif f.name == "aliases":
                if isinstance(value, str) or not all(isinstance(a, str) for a in value):
                    raise ConfigError(f"Protocol entry '{self.name}': aliases must be a list of names, not {value!r}.")
                object.__setattr__(self, "aliases", tuple(value))  # a list given is kept as the tuple it reads as
            elif not isinstance(value, str) and not (value is None and f.default is None):
                raise ConfigError(f"Protocol entry '{self.name}': {f.name} must be a string, not {value!r}.")

    def _check_rules(self, value: Any) -> None:
        if isinstance(value, str):
            if ":" not in value:
                raise ConfigError(f"Protocol entry '{self.name}': protocol must be 'module:Class' or the class "
                                  f"itself, not {value!r}.")
            return
        from lexicoord.core.protocol import Protocol

        if not (isinstance(value, type) and issubclass(value, Protocol)):
            raise ConfigError(f"Protocol entry '{self.name}': protocol must be a Protocol subclass or "
                              f"'module:Class', not {value!r}.")

    @property
    def module(self) -> str:
        """The module that holds the rules (what names the distribution the protocol comes from)."""
        return self.protocol.partition(":")[0] if isinstance(self.protocol, str) else self.protocol.__module__

    def rules(self) -> type[Protocol[Any, Any, Any]]:
        """The protocol's rules, imported now."""
        from lexicoord.core.protocol import Protocol

        found = self._load("protocol") if isinstance(self.protocol, str) else self.protocol
        if not (isinstance(found, type) and issubclass(found, Protocol)):
            raise ConfigError(f"Protocol '{self.name}': its protocol '{self.protocol}' is not a Protocol class.")
        return found

    def _load(self, what: str) -> Any:
        """The object the ``what`` field names, imported now; a field left empty, a module that does not import
        or a name it does not hold is a :class:`ConfigError` naming the protocol and the field."""
        target = getattr(self, what)
        if not target:
            raise ConfigError(f"Protocol '{self.name}' has no {what}.")
        module, _, attr = target.partition(":")
        try:
            return getattr(import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"Protocol '{self.name}': its {what} '{target}' cannot be loaded: {exc}.") from exc

    def _callable(self, what: str) -> Any:
        found = self._load(what)
        if not callable(found):
            raise ConfigError(f"Protocol '{self.name}': its {what} '{getattr(self, what)}' is not a function.")
        return found

    def report_writer(self) -> ReportWriter:
        """The function that writes a stored run's report (``lexicoord report RUN``)."""
        return cast("ReportWriter", self._callable("report"))

    def statistics_reader(self) -> StatisticsReader:
        """The function that computes the protocol's statistics from a run's stored episodes and events."""
        return cast(StatisticsReader, self._callable("statistics"))

    def outcomes_reader(self) -> OutcomeReader:
        """The function that gives each finished episode's outcome for ``lexicoord compare``."""
        return cast("OutcomeReader", self._callable("outcomes"))

    def plan(self) -> Plan[Any]:
        """The protocol's experiment plan, which reads an experiment file for ``lexicoord run FILE``."""
        found = self._load("experiment")
        if not all(callable(getattr(found, m, None)) for m in ("campaign", "calls")):
            raise ConfigError(f"Protocol '{self.name}': its experiment '{self.experiment}' is not a plan "
                              "(an object with campaign() and calls()).")
        return cast("Plan[Any]", found)

    def room_adapter(self) -> type[RoomAdapter]:
        """The live-room adapter class, for the start page, rooms and studies."""
        found = self._load("room")
        if not isinstance(found, type):
            raise ConfigError(f"Protocol '{self.name}': its room '{self.room}' is not a class.")
        return cast("type[RoomAdapter]", found)

    def command_group(self) -> typer.Typer:
        """The protocol's command group, mounted as ``lexicoord NAME``."""
        return cast("typer.Typer", self._load("cli"))

    def item_source(self) -> ItemSource:
        """Where the protocol's rooms and studies draw their items from."""
        from lexicoord.core.items import ItemSource

        found = self._load("items")
        if not isinstance(found, ItemSource):
            raise ConfigError(f"Protocol '{self.name}': its items '{self.items}' is not an ItemSource.")
        return found

    def task_object(self) -> Any:
        """The task the protocol plays (a :class:`~lexicoord.tasks.base.Task`, or a table of them by name)."""
        return self._load("task")


_registry: Registry[ProtocolEntry] = Registry("protocol", PROTOCOLS_GROUP)


def register_protocol(entry: ProtocolEntry) -> None:
    """Make ``entry`` known by its name; refused (a :class:`ConfigError` naming both distributions) when another
    package's protocol has that name."""
    _registry.register(entry.name, entry, entry.module)


def unregister_protocol(name: str) -> None:
    """Take a protocol out again, so that its name is free (a test that registered one for a while)."""
    _registry.remove(name)


def load_protocols() -> None:
    """Run every installed ``register()`` once; one that fails is noted and the others still load."""
    _registry.load()


def protocols() -> dict[str, ProtocolEntry]:
    return _registry.all()


def skipped_protocols() -> dict[str, str]:
    """The protocol plugins ``LEXICOORD_PLUGINS`` kept from loading: entry-point name -> distribution."""
    _registry.load()
    return dict(_registry.skipped)


def failed_protocols() -> dict[str, str]:
    return _registry.failed()


def get_protocol(name: str) -> ProtocolEntry:
    return _registry.get(name)
