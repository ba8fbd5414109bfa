"""The layers point one way: the core imports nothing above it, runs never import protocols, and the
generic room imports no protocol. Read from the source's own import statements."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "lexicoord"


def _for_types_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports that name a layer's types for the type checker and never run."""
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports_of(path: Path) -> set[str]:
    """Every ``lexicoord...`` module a file imports when it runs, at any depth (including imports inside
    functions); imports under ``if TYPE_CHECKING:`` name types only and are not counted."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for block in [n for n in ast.walk(tree) if _for_types_only(n)]:
        block.body = []  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lexicoord"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("lexicoord")}
    return found


def files(*parts: str) -> list[Path]:
    target = SRC.joinpath(*parts)
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


@pytest.mark.parametrize("path", files("core"), ids=lambda p: p.name)
def test_the_core_imports_nothing_above_it(path: Path) -> None:
    above = {m for m in imports_of(path) if not m.startswith(("lexicoord.core", "lexicoord.errors", "lexicoord.exports"))}
    assert not above, f"{path.name} imports {sorted(above)}"


@pytest.mark.parametrize("path", files("runs"), ids=lambda p: p.name)
def test_runs_never_import_protocols(path: Path) -> None:
    assert not {m for m in imports_of(path) if m.startswith("lexicoord.protocols")}


@pytest.mark.parametrize("path", files("web"), ids=lambda p: p.name)
def test_the_generic_web_imports_no_protocol(path: Path) -> None:
    """Rooms, pages, the viewer and the shared turn rooms know protocols only through the registry."""
    bad = {m for m in imports_of(path) if m.startswith("lexicoord.protocols")}
    assert not bad, f"{path.relative_to(SRC)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", files("experiments"), ids=lambda p: p.name)
def test_experiments_know_protocols_only_through_the_registry(path: Path) -> None:
    """A protocol installed from another distribution runs from a file exactly as a built-in one does."""
    bad = {m for m in imports_of(path) if m.startswith(("lexicoord.protocols", "lexicoord.cli", "lexicoord.web"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", files("studies"), ids=lambda p: p.name)
def test_studies_know_protocols_only_through_the_registry_and_sit_below_the_command_line(path: Path) -> None:
    """A study plays any protocol that has a room, built in or installed, as its rooms do."""
    bad = {m for m in imports_of(path) if m.startswith(("lexicoord.protocols", "lexicoord.cli"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"


#: A protocol package's modules that mount it on the layers above: its statistics and report (on the store and
#: the shared analysis helpers), its live room (on the web's rooms) and its commands (on the command line's).
MOUNTS = {"statistics": ("runs", "analysis"), "figures": ("analysis",), "report": ("runs", "analysis"),
          "room": ("runs", "analysis", "web"), "cli": ("runs", "analysis", "web", "cli", "experiments"),
          "terminal": ("runs", "cli"), "experiment": ("runs", "experiments")}
ABOVE = ("runs", "web", "cli", "analysis", "experiments")


def mount_of(path: Path) -> str | None:
    stem = path.stem
    return next((m for m in MOUNTS if stem == m or stem.startswith(f"{m}_")), None)


@pytest.mark.parametrize("path", files("protocols"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_protocols_rules_never_import_the_layers_above_them(path: Path) -> None:
    """Rules, events, settings and prompts import only the core and the shared lower layers; only the mounting
    modules reach up, and each only as far as it mounts (a report never draws a page, a room runs no command)."""
    mount = mount_of(path)
    allowed = {f"lexicoord.{layer}" for layer in MOUNTS.get(mount or "", ())}
    above = {m for m in imports_of(path) if m.split(".")[1] in ABOVE and ".".join(m.split(".")[:2]) not in allowed}
    assert not above, f"{path.relative_to(SRC)} ({mount or 'rules'}) imports {sorted(above)}"


@pytest.mark.parametrize("path", files("protocols"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_protocol_imports_no_other_protocol(path: Path) -> None:
    """One package per protocol: a fix to one never reaches into another (shared code lives in a shared layer)."""
    own = f"lexicoord.protocols.{path.relative_to(SRC / 'protocols').parts[0]}" if path.parent != SRC / "protocols" else ""
    other = {m for m in imports_of(path) if m.startswith("lexicoord.protocols.") and not m.startswith(own)}
    assert not other, f"{path.relative_to(SRC)} imports {sorted(other)}"


def test_no_protocol_lives_outside_its_package() -> None:
    """Statistics, reports, rooms, commands and prompts of a protocol sit in protocols/<name>/ and nowhere else."""
    names = [p.name for p in (SRC / "protocols").iterdir() if p.is_dir() and not p.name.startswith("_")]
    prefixes = {*names, "coord"}
    strays = [p.relative_to(SRC) for folder in ("analysis", "cli", "web", "prompts") for p in (SRC / folder).rglob("*")
              if p.is_file() and any(p.stem.startswith(f"{n}_") or p.stem == n for n in prefixes)]
    assert not strays, f"protocol files outside their package: {strays}"


@pytest.mark.parametrize("path", files("lexicon"), ids=lambda p: p.name)
def test_the_lexicon_layer_knows_no_protocol(path: Path) -> None:
    """COGENT's layer serves any protocol (the debate, Werewolf, clarifications): it imports only the core."""
    above = {m for m in imports_of(path) if not m.startswith(("lexicoord.core", "lexicoord.lexicon", "lexicoord.errors"))}
    assert not above, f"{path.name} imports {sorted(above)}"


@pytest.mark.parametrize("path", files("runs"), ids=lambda p: p.name)
def test_runs_draw_nothing(path: Path) -> None:
    """A run tells the observer its caller gives (the terminal's bar belongs to the command line)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    assert not {m for m in found if m.split(".")[0] == "rich"}, f"{path.name} imports {sorted(found)}"


def runtime_imports(path: Path) -> set[str]:
    """The ``lexicoord`` modules a file imports when it runs (at module level or in a function), leaving out
    ``if TYPE_CHECKING:`` blocks, which name types for the checker and import nothing."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lexicoord"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("lexicoord")}
    return found


def module_name(path: Path) -> str:
    return ".".join(("lexicoord", *path.relative_to(SRC).with_suffix("").parts)).removesuffix(".__init__")


def test_the_web_package_has_no_import_cycle() -> None:
    """The room, its adapters' contract and the app import one way (the room once imported the adapters' base,
    which imported the room back)."""
    modules = {module_name(p): p for p in files("web")}
    graph = {name: {m for m in runtime_imports(path) if m in modules and m != name} for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            cycle = trail[trail.index(name):] + [name]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if name in done:
            return
        for nxt in sorted(graph[name]):
            visit(nxt, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_a_room_adapter_implements_at_most_six_calls() -> None:
    """The seam between the room and a protocol: the calls the room makes of an adapter, each protocol's
    implementation of them, and nothing the room calls besides (its settings model holds the form's concerns)."""
    from lexicoord.web.adapters.base import RoomAdapter

    calls = {name for name, value in vars(RoomAdapter).items() if inspect.isfunction(value) and not name.startswith("_")}
    assert calls == {"start", "move", "watch", "view", "summary", "export"}, calls
    generic = [path for path in files("web") if "adapters" not in path.parts]  # the room, its parts and routes
    room = "".join(path.read_text(encoding="utf-8") for path in generic)
    assert "room_game.py" in {p.name for p in generic} and "adapter." in room
    used = set(re.findall(r"\.adapter\.(\w+)\(", room))
    assert used <= calls, f"the room calls more of its adapter than the contract: {sorted(used - calls)}"


def test_imports_for_types_only_are_not_counted_but_every_other_is(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lexicoord.web.app import x\n"
                      "def f():\n    from lexicoord.runs.store import Store\n"
                      "if True:\n    import lexicoord.analysis.report\n")
    assert imports_of(source) == {"lexicoord.runs.store", "lexicoord.analysis.report"}


ITEM_USERS = [*files("web"), *files("studies"), SRC / "cli" / "serve_cmd.py", SRC / "cli" / "study_cmd.py"]


@pytest.mark.parametrize("path", ITEM_USERS, ids=lambda p: str(p.relative_to(SRC)))
def test_where_a_protocols_items_come_from_is_the_protocols_own(path: Path) -> None:
    """The server, its rooms and studies get every protocol's items through its item source: none of them reads a
    dataset or a benchmark itself, or branches on a protocol's name."""
    assert not {m for m in imports_of(path) if m.startswith("lexicoord.tasks")}, path.name
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"""(==|!=|\bin)\s*\(?\s*["'](coordination|cogent|werewolf|debate)["']""", text), path.name
