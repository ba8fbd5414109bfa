"""One registry for protocols, providers and event types: plugins found by real entry points, loaded once.

Each test installs a small distribution the way an installer lays it out (modules on a folder of ``sys.path``
beside a ``.dist-info`` whose ``entry_points.txt`` names them), so the registry reads it through
``importlib.metadata`` as it reads a third party's package.
"""

from __future__ import annotations

import logging
import sys
import textwrap
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from lexicoord.core.plugins import Registry
from lexicoord.errors import ConfigError

Install = Callable[[dict[str, str], dict[str, str]], tuple[str, ModuleType]]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``install(entry_points, modules)``: a distribution with those entry points (name to ``module:attr``) and
    modules (name to source), returning its group and a shared ``state`` module the plugins record calls in.

    Module names get a prefix of their own (``{p}`` in names and sources) so no test sees another's imports.
    """
    prefix = f"plug_{uuid.uuid4().hex[:8]}_"
    made: list[str] = []

    def _install(entry_points: dict[str, str], modules: dict[str, str]) -> tuple[str, ModuleType]:
        site = tmp_path / "site"
        info = site / f"{prefix}dist-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {prefix}dist\nVersion: 1.0\n")
        (info / "top_level.txt").write_text("".join(f"{prefix}{name}\n" for name in ("state", *modules)))
        group = f"lexicoord.test.{prefix}"
        lines = [f"[{group}]", *(f"{name} = {target.format(p=prefix)}" for name, target in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        state = "import threading\ncalls = []\nlock = threading.Lock()\nregistry = None\n"
        for name, source in {"state": state, **modules}.items():
            (site / f"{prefix}{name}.py").write_text(textwrap.dedent(source).format(p=prefix))
            made.append(f"{prefix}{name}")
        monkeypatch.syspath_prepend(str(site))
        __import__(f"{prefix}state")
        return group, sys.modules[f"{prefix}state"]

    yield _install
    for name in made:
        sys.modules.pop(name, None)


# Plugin sources: each ``register()`` records its call in the shared state module and registers on its registry.
GOOD = """
    import {p}state as state

    def register():
        with state.lock:
            state.calls.append("{name}")
        state.registry.register("{name}", "{name}-item", __name__)
"""
BROKEN = """
    def register():
        raise RuntimeError("no such service")
"""


def good(name: str) -> str:
    return GOOD.replace("{name}", name)


def test_a_plugin_that_fails_is_reported_and_the_others_still_load(install: Install, caplog) -> None:
    group, state = install({"alpha": "{p}alpha:register", "broken": "{p}broken:register", "beta": "{p}beta:register",
                            "missing": "{p}nowhere:register"},
                           {"alpha": good("alpha"), "broken": BROKEN, "beta": good("beta")})
    said: list[str] = []
    state.registry = registry = Registry[str]("widget", group, on_failure=said.append)
    with caplog.at_level(logging.WARNING, logger="lexicoord.core.plugins"):
        assert registry.all() == {"alpha": "alpha-item", "beta": "beta-item"}
    assert registry.failed() == {"broken": "RuntimeError: no such service",
                                 "missing": f"ModuleNotFoundError: No module named '{group.rsplit('.', 1)[1]}nowhere'"}
    prefix = group.rsplit(".", 1)[1]
    broken = f"The widget plugin 'broken' ({prefix}broken:register) failed to load: RuntimeError: no such service."
    assert said[0] == broken and len(said) == 2 and said[1].startswith("The widget plugin 'missing'")
    assert [r.getMessage() for r in caplog.records] == said, "each failure is logged as the sentence shown"
    assert registry.get("beta") == "beta-item", "a plugin after the broken ones is found"


def test_the_plugins_load_once_even_when_many_threads_ask_at_the_same_moment(install: Install) -> None:
    slow = good("slow").replace("def register():", "def register():\n        import time\n        time.sleep(0.3)")
    group, state = install({"slow": "{p}slow:register"}, {"slow": slow})
    state.registry = registry = Registry[str]("widget", group)
    registry.register("built-in", "built-in-item", "lexicoord.builtin")
    assert state.calls == [], "nothing is loaded before the first lookup"

    threads = 8
    barrier = threading.Barrier(threads)
    seen: list[dict[str, str]] = []

    def ask() -> None:
        barrier.wait()
        seen.append(registry.all())

    workers = [threading.Thread(target=ask) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    assert state.calls == ["slow"], f"register() ran {len(state.calls)} times"
    assert len(seen) == threads and all(s == {"built-in": "built-in-item", "slow": "slow-item"} for s in seen), \
        "every thread waited for the load rather than answer before it was done"
    registry.get("slow"), registry.failed()
    assert state.calls == ["slow"], "later lookups do not load again"


def test_a_plugin_that_looks_up_while_it_loads_sees_what_is_registered_so_far(install: Install) -> None:
    asking = good("asking").replace('state.registry.register("asking", "asking-item", __name__)',
                                    'state.calls.append(sorted(state.registry.all()))\n'
                                    '        state.registry.register("asking", "asking-item", __name__)')
    group, state = install({"first": "{p}first:register", "asking": "{p}asking:register"},
                           {"first": good("first"), "asking": asking})
    state.registry = registry = Registry[str]("widget", group)
    assert set(registry.all()) == {"first", "asking"} and registry.failed() == {}
    assert state.calls == ["first", "asking", ["first"]], "the load ran once, not again from inside itself"


def test_an_entry_point_that_names_a_module_registers_by_being_imported(install: Install) -> None:
    module = """
        import {p}state as state

        state.calls.append("imported")
        state.registry.register("typed", "typed-item", __name__)
    """
    group, state = install({"types": "{p}types"}, {"types": module})
    state.registry = registry = Registry[str]("event type", group, call=False)
    assert registry.all() == {"typed": "typed-item"} and state.calls == ["imported"] and registry.failed() == {}


def test_an_unknown_name_is_refused_naming_the_known_ones(install: Install) -> None:
    group, state = install({"beta": "{p}beta:register", "alpha": "{p}alpha:register"},
                           {"alpha": good("alpha"), "beta": good("beta")})
    state.registry = registry = Registry[str]("widget", group)
    with pytest.raises(ConfigError) as refused:
        registry.get("nope")
    assert str(refused.value) == "No widget 'nope' is installed; known: alpha, beta."
    with pytest.raises(KeyError, match="typed nope/x; known: alpha, beta"):
        registry.get("nope", lambda known: KeyError(f"typed nope/x; known: {known}"))
    empty = Registry[str]("gadget", f"{group}.nothing")
    with pytest.raises(ConfigError, match=r"^No gadget 'x' is installed; known: none\.$"):
        empty.get("x")


def test_a_name_taken_by_another_package_is_refused_naming_both_distributions(install: Install) -> None:
    """One name is one thing: a plugin that registers a name a built-in holds fails to load, with a sentence naming
    both distributions, and the built-in stays; the same module registering again replaces its own entry."""
    group, state = install({"alpha": "{p}alpha:register", "beta": "{p}beta:register"},
                           {"alpha": good("alpha"), "beta": good("beta")})
    prefix = group.rsplit(".", 1)[1]
    said: list[str] = []
    state.registry = registry = Registry[str]("widget", group, on_failure=said.append)
    registry.register("alpha", "built-in-item", "lexicoord.core.plugins")
    assert registry.all() == {"alpha": "built-in-item", "beta": "beta-item"}, "never a silent replacement"
    [sentence] = said
    assert f"The widget plugin 'alpha' ({prefix}alpha:register) failed to load" in sentence
    assert "'alpha' is already registered by lexicoord (lexicoord.core.plugins)" in sentence
    assert f"{prefix}dist ({prefix}alpha) registers another under the same name" in sentence
    with pytest.raises(ConfigError, match=f"already registered by {prefix}dist"):
        registry.register("beta", "mine", "lexicoord.core.plugins")
    registry.register("alpha", "again", "lexicoord.core.plugins")  # the same module, imported twice
    assert registry.get("alpha") == "again" and list(registry.all()) == ["alpha", "beta"]
    unknown = Registry[str]("widget", f"{group}.none")
    unknown.register("gamma", "one", "some_script")
    with pytest.raises(ConfigError, match=r"registered by module some_script \(some_script\); module other_script"):
        unknown.register("gamma", "two", "other_script")


@pytest.mark.parametrize(("value", "loads"), [(None, True), ("", False), ("someone-else", False),
                                              ("{dist}", True), ("other, {DIST}", True)])
def test_lexicoord_plugins_limits_which_distributions_load(install: Install, monkeypatch: pytest.MonkeyPatch,
                                                           value: str | None, loads: bool) -> None:
    group, state = install({"alpha": "{p}alpha:register"}, {"alpha": good("alpha")})
    dist = group.rsplit(".", 1)[1] + "dist"
    if value is None:
        monkeypatch.delenv("LEXICOORD_PLUGINS", raising=False)
    else:  # a distribution's name as people write it: its own, or cased with - for _
        monkeypatch.setenv("LEXICOORD_PLUGINS", value.format(dist=dist, DIST=dist.upper().replace("_", "-")))
    state.registry = registry = Registry[str]("widget", group)
    registry.register("built-in", "b", "lexicoord.core.plugins")
    assert set(registry.all()) == ({"built-in", "alpha"} if loads else {"built-in"})
    assert registry.skipped == ({} if loads else {"alpha": dist.replace("_", "-")})
    assert state.calls == (["alpha"] if loads else [])
