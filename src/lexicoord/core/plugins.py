"""Things by name that installed packages add: protocols, model providers, event types.

Each kind is one :class:`Registry`: a dict by name, filled by :meth:`Registry.register` and by the entry
points of the kind's group, which a package declares so that lexicoord finds it with no line of lexicoord
changed (the built-ins register exactly that way). An entry point names a function to call (``register()``),
or a module whose import registers what it defines.

The entry points are read on the first lookup, not at import, so that importing lexicoord stays cheap; once,
under a lock, because the store and the web look things up from several threads at once. A plugin that fails
to load is noted (and logged) and the others still load: one broken package must not take the built-ins down
with it.

A name is one thing: a second registration under a name taken by another module is refused with a sentence
naming both distributions (a silent replacement would run one package's code under another's name, and which
one won would depend on the order entry points happen to load in). The same module registering again (imported
twice, or reloaded) replaces its own entry. ``LEXICOORD_PLUGINS`` limits which installed distributions load
(a comma-separated list; empty: none), as llm's ``LLM_LOAD_PLUGINS`` does; lexicoord's own built-ins always load.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points, packages_distributions
from typing import Generic, TypeVar

from lexicoord.errors import ConfigError

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The distributions whose plugins load, comma-separated (unset: every installed one; empty: none but lexicoord's).
PLUGINS_VARIABLE = "LEXICOORD_PLUGINS"
#: The distribution whose entry points are the built-ins: they load whatever ``LEXICOORD_PLUGINS`` says.
OWN = "lexicoord"


def canonical(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503): case, runs of ``-``, ``_`` and ``.`` aside."""
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_plugins() -> set[str] | None:
    """The distributions ``LEXICOORD_PLUGINS`` lets load (``None``: unset, every one)."""
    value = os.environ.get(PLUGINS_VARIABLE)
    if value is None:
        return None
    return {canonical(n.strip()) for n in value.split(",") if n.strip()}


def distribution_of(module: str) -> str:
    """The installed distribution a module comes from, as a sentence can name it ("my-protocol"), or the module
    itself where no installed distribution holds it (a test's or a script's own code). Read when a name is
    refused only, so never on the way to a lookup."""
    dists = packages_distributions().get(module.partition(".")[0]) or []
    return dists[0] if dists else f"module {module}"


class Registry(Generic[T]):
    """Items of one kind by name, with the installed plugins of ``group`` loaded once, on first use.

    ``kind`` names an item in sentences (``"protocol"``); ``call`` says whether an entry point names a
    function to call (``register()``) or a module whose import is the registration; ``on_failure`` is given
    the sentence for each plugin that fails to load, for a caller that shows them (``lexicoord models``).
    """

    def __init__(self, kind: str, group: str, *, call: bool = True,
                 on_failure: Callable[[str], object] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.call = call
        self.on_failure = on_failure
        #: What is registered so far, plugins loaded or not: a lookup that must not load them reads it.
        self.entries: dict[str, T] = {}
        #: The module each entry was registered from, by name (what a refused second registration names).
        self.origins: dict[str, str] = {}
        #: The distributions ``LEXICOORD_PLUGINS`` kept from loading, by entry-point name.
        self.skipped: dict[str, str] = {}
        self._failed: dict[str, str] = {}
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()

    def register(self, name: str, item: T, module: str) -> None:
        """Make ``item``, defined in ``module``, known as ``name``; refused when another module holds the name.

        The same module may register again (imported twice, reloaded): its entry is replaced. No lock:
        registrations come from plugins being imported, and waiting here for a load that is itself importing could
        deadlock on the import lock (one assignment is atomic anyway).
        """
        taken = self.origins.get(name)
        if taken is not None and taken != module:
            first, second = distribution_of(taken), distribution_of(module)
            raise ConfigError(
                f"The {self.kind} '{name}' is already registered by {first} ({taken}); {second} ({module}) registers "
                f"another under the same name. One name is one {self.kind}: rename one, or uninstall one of them "
                f"(or leave it out with {PLUGINS_VARIABLE}).")
        self.entries[name] = item
        self.origins[name] = module

    def remove(self, name: str) -> None:
        """Take ``name`` out (a test, or a host that registered something for a while), so the name is free again."""
        self.entries.pop(name, None)
        self.origins.pop(name, None)

    def load(self) -> None:
        """Load every installed plugin of the group, the first time only; a thread that comes meanwhile waits.

        A plugin that looks something up while it loads (the same thread, inside the lock) sees what is
        registered so far rather than starting the load again.
        """
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            allowed = allowed_plugins()
            try:
                for ep in entry_points(group=self.group):
                    dist = canonical(ep.dist.name) if ep.dist is not None else ""
                    if allowed is not None and dist != OWN and dist not in allowed:
                        self.skipped[ep.name] = dist
                        continue
                    self._load_one(ep)
            finally:
                self._loading = False
            self._loaded = True

    def _load_one(self, ep: EntryPoint) -> None:
        try:
            target = ep.load()
            if self.call:
                target()
        except Exception as exc:  # a broken plugin must not take the others down with it
            self._failed[ep.name] = why = f"{type(exc).__name__}: {exc}"
            sentence = f"The {self.kind} plugin '{ep.name}' ({ep.value}) failed to load: {why}."
            log.warning(sentence)
            if self.on_failure is not None:
                self.on_failure(sentence)

    def all(self) -> dict[str, T]:
        """Every item by name, the plugins loaded (a copy: changing it changes nothing here)."""
        self.load()
        return dict(self.entries)

    def failed(self) -> dict[str, str]:
        """The plugins that failed to load, by entry-point name: the error's type and message."""
        self.load()
        return dict(self._failed)

    def get(self, name: str, unknown: Callable[[str], Exception] | None = None) -> T:
        """The item called ``name``, or an error naming the known ones.

        The error is ``No KIND 'name' is installed; known: a, b.``, unless ``unknown`` makes another from the
        known names (joined by commas, or ``none``): a caller whose user typed more than the name says it all.
        """
        self.load()
        try:
            return self.entries[name]
        except KeyError:
            known = ", ".join(sorted(self.entries)) or "none"
            if unknown is not None:
                raise unknown(known) from None
            raise ConfigError(f"No {self.kind} '{name}' is installed; known: {known}.") from None
