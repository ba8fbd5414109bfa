"""Where a protocol's items come from: one hook per protocol, used by the server, its rooms and studies alike.

A server offers each protocol's rooms some named sets of items (the coordination game's sentences, COGENT's
benchmark questions, a plugin's own); a study draws its groups' games from its own. What a set may be (a file,
a folder, a built-in name), how it is read and checked, and which room setting picks one belong to the
protocol, so each protocol names an :class:`ItemSource` in its entry (``items``) and nothing outside the
protocol's package knows what its items are.

Sets are written ``PROTOCOL=WHERE`` or ``PROTOCOL/NAME=WHERE`` on ``lexicoord serve --items``, and ``NAME =
"WHERE"`` in a study file's ``[items]``; a set without a name is called by its ``WHERE``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from lexicoord.errors import ConfigError

#: Item sets by protocol, then by name.
ItemSets = dict[str, dict[str, Sequence[Any]]]


class ItemSource(ABC):
    """How one protocol's items are named, read and picked."""

    #: The room setting that names the set a game draws from (``dataset``, ``source``).
    setting: ClassVar[str]
    #: What ``WHERE`` may be, as help and errors say it.
    forms: ClassVar[str]
    #: The sets a server offers when its operator names none for the protocol: name -> where.
    defaults: ClassVar[dict[str, str]] = {}

    @abstractmethod
    def load(self, name: str, where: str) -> Sequence[Any]:
        """The items of the set ``name`` at ``where``, checked now (a file may be read one item at a time later);
        a :class:`ConfigError` that says what is wrong."""

    def study_settings(self, name: str) -> dict[str, Any]:
        """The room settings under which a study's games draw from its set ``name``."""
        return {self.setting: name}


def parse_spec(spec: str) -> tuple[str, str, str]:
    """``PROTOCOL=WHERE`` or ``PROTOCOL/NAME=WHERE`` as (protocol, name, where); the name is ``WHERE`` when none."""
    head, sep, where = spec.partition("=")
    protocol, _, name = head.partition("/")
    if not sep or not protocol.strip() or not where.strip():
        raise ConfigError(f"--items takes PROTOCOL=WHERE or PROTOCOL/NAME=WHERE (coordination=builtin), not {spec!r}.")
    return protocol.strip(), (name or where).strip(), where.strip()


def source_of(protocol: str) -> ItemSource | None:
    """The protocol's item source (``None``: its rooms draw no items from the server)."""
    from lexicoord.core.registry import get_protocol

    entry = get_protocol(protocol)
    return entry.item_source() if entry.items else None


def load_items(protocols: Iterable[str], specs: Sequence[str] = (),
               named: Mapping[str, Mapping[str, str]] | None = None) -> ItemSets:
    """Every offered protocol's sets: those ``specs`` (``--items``) and ``named`` (protocol -> name -> where) give,
    else the protocol's defaults; each checked now, so a bad file is one clear error before anything starts.
    A set for a protocol that is not offered, or has no items, is refused."""
    offered = list(dict.fromkeys(protocols))
    wanted: dict[str, dict[str, str]] = {p: dict((named or {}).get(p, {})) for p in offered}
    for spec in specs:
        protocol, name, where = parse_spec(spec)
        if protocol not in wanted:
            raise ConfigError(f"--items {spec}: '{protocol}' is not offered here; offered: {', '.join(offered)}.")
        wanted[protocol][name] = where
    out: ItemSets = {}
    for protocol, sets in wanted.items():
        source = source_of(protocol)
        if source is None:
            if sets:
                raise ConfigError(f"Protocol '{protocol}' draws no items from the server; drop its --items.")
            continue
        out[protocol] = {name: source.load(name, where) for name, where in (sets or source.defaults).items()}
    return out
