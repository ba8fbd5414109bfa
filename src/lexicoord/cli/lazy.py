"""A command group whose subcommands are imported only when one of them is run or asked for its own help.

Every command module imports what its command needs: the store (SQLAlchemy, Alembic), the runner, the web
server, the report's figures. Importing them all to print ``lexicoord --help`` or to list the runs took
seconds. So the group knows each subcommand by its name, where it lives (``module:attribute``, a
``typer.Typer`` or a command function) and its one-line help, which is all a listing needs. The module is
imported the first time the command is looked up to run it (or to show its own ``--help``), and the command is
built from it exactly as ``add_typer`` or ``command`` on the root would have built it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer import _click
    from typer.core import MarkupMode


@dataclass(frozen=True)
class Lazy:
    """A subcommand known by name before its module is imported."""

    name: str
    #: ``module:attribute``: a ``typer.Typer`` (mounted as a group) or a function (mounted as a command).
    target: str
    #: The line ``--help`` lists it with: the command's own first paragraph, or a protocol's summary.
    help: str
    #: Answers to its name but is not listed (a short form).
    hidden: bool = False

    def load(self, markup: MarkupMode = "rich", suggest: bool = True) -> _click.Command:
        """Import the module and build the command as the root would have (the root's markup and suggestions)."""
        module, _, attribute = self.target.partition(":")
        target = getattr(import_module(module), attribute)
        holder = typer.Typer(rich_markup_mode=markup, suggest_commands=suggest)
        holder.callback()(_never_run)  # with a callback typer builds a group, even around a single command
        if isinstance(target, typer.Typer):
            holder.add_typer(target, name=self.name, hidden=self.hidden)
        else:
            holder.command(self.name, hidden=self.hidden)(target)
        return typer.main.get_group(holder).commands[self.name]

    def stand_in(self, markup: MarkupMode = "rich") -> _click.Command:
        """What a listing needs of the command (its name, its line, whether it is hidden), with nothing imported."""
        return TyperCommand(self.name, help=self.help, hidden=self.hidden, rich_markup_mode=markup)


def _never_run() -> None:
    """The callback of the group a command is built in; only the command is kept."""


def protocol_commands() -> list[Lazy]:
    """Each installed protocol's command group (and its hidden short forms), listed with the protocol's summary.

    Reading the registry runs every protocol's ``register()``, which imports its rules and none of its
    commands: the group named by ``ProtocolEntry.cli`` is imported only when it is used.
    """
    from lexicoord.core.registry import protocols

    out: list[Lazy] = []
    for name, entry in sorted(protocols().items()):
        if entry.cli:
            out.append(Lazy(name, entry.cli, entry.summary))
            out += [Lazy(alias, entry.cli, entry.summary, hidden=True) for alias in entry.aliases]
    return out


class _Commands(MutableMapping[str, "_click.Command"]):
    """A group's commands by name: every name known with nothing imported, a command built on its first lookup.

    Typer reads ``group.commands`` for lookups and for its "did you mean" suggestions (the keys): the keys are
    the declared names, and only ``commands[name]`` imports that one command's module.
    """

    def __init__(self, built: MutableMapping[str, _click.Command], lookup: Callable[[str], Lazy | None],
                 names: Callable[[], list[str]], build: Callable[[Lazy], _click.Command]) -> None:
        self._built = dict(built)
        self._lookup, self._names, self._build = lookup, names, build

    def built(self, name: str) -> bool:
        return name in self._built

    def __getitem__(self, name: str) -> _click.Command:
        if name not in self._built:
            lazy = self._lookup(name)
            if lazy is None:
                raise KeyError(name)
            self._built[name] = self._build(lazy)
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._built or self._lookup(name) is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._names(), *self._built]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._names(), *self._built]))

    def __setitem__(self, name: str, command: _click.Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]


class LazyGroup(TyperGroup):
    """A typer group (``typer.Typer(cls=...)``) whose subcommands are :class:`Lazy`.

    ``built_in`` declares the commands known up front; :meth:`more` those found by a look-up (the protocols'
    groups, from the registry's entry points), asked only when a name is not a built-in one or the whole list
    is wanted. A built-in name is never shadowed by a found one.
    """

    built_in: ClassVar[tuple[Lazy, ...]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._writing_help = False
        self._found: dict[str, Lazy] | None = None
        self._commands = _Commands(self.commands, self.lookup, self._declared, self._build)
        self.commands = self._commands

    def more(self) -> Iterable[Lazy]:
        """Commands found by a look-up rather than declared; none unless a subclass says so."""
        return ()

    def lookup(self, name: str) -> Lazy | None:
        """The subcommand called ``name``, a built-in one without looking any further."""
        for lazy in self.built_in:
            if lazy.name == name:
                return lazy
        if self._found is None:
            self._found = {}
            for lazy in self.more():
                self._found.setdefault(lazy.name, lazy)
        return self._found.get(name)

    def _declared(self) -> list[str]:
        self.lookup("")  # the found ones, looked up once
        assert self._found is not None
        built_in = [lazy.name for lazy in self.built_in]
        return list(dict.fromkeys([*built_in, *self._found]))

    def _build(self, lazy: Lazy) -> _click.Command:
        return lazy.load(self.rich_markup_mode, self.suggest_commands)

    def list_commands(self, ctx: _click.Context) -> list[str]:
        """Every name, in the order declared (built-in ones first), with nothing imported."""
        return list(self._commands)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """The command itself, its module imported now; while this group's own help is written, a stand-in."""
        if self._writing_help and not self._commands.built(cmd_name):
            lazy = self.lookup(cmd_name)
            return None if lazy is None else lazy.stand_in(self.rich_markup_mode)
        return self._commands.get(cmd_name)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        """The help page, its command listing written from the declared lines."""
        self._writing_help = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._writing_help = False
