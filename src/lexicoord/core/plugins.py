"""Things by name that installed packages add: protocols, model providers, event types.

Each kind is one :class:`Registry`: a dict by name, filled by :meth:`Registry.register` and by the entry
points of the kind's group, which a package declares so that lexicoord finds it with no line of lexicoord
changed (the built-ins register exactly that way). An entry point names a function to call (``register()``),
or a module whose import registers what it defines.

The entry points are read on the first lookup, not at import, so that importing lexicoord stays cheap; once,
under a lock, because the store and the web look things up from several threads at once. A plugin that fails
to load is noted (and logged) and the others still load: one broken package must not take the built-ins down
with it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from lexicoord.errors import ConfigError

log = logging.getLogger(__name__)
T = TypeVar("T")


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
        self._failed: dict[str, str] = {}
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()

    def register(self, name: str, item: T) -> None:
        """Make ``item`` known as ``name``; a later registration under the same name replaces the earlier one.

        Replacing is what lets a package override a built-in, and a module imported twice define its types
        twice. No lock: registrations come from plugins being imported, and waiting here for a load that is
        itself importing could deadlock on the import lock (one assignment is atomic anyway).
        """
        self.entries[name] = item

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
            try:
                for ep in entry_points(group=self.group):
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
