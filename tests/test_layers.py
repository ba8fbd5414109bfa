"""The layers point one way: the core imports nothing above it, runs never import protocols, and the
generic room imports no protocol. Read from the source's own import statements."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "lexicoord"


def imports_of(path: Path) -> set[str]:
    """Every ``lexicoord...`` module a file imports, at any depth (including imports inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    above = {m for m in imports_of(path) if not m.startswith(("lexicoord.core", "lexicoord.errors"))}
    assert not above, f"{path.name} imports {sorted(above)}"


@pytest.mark.parametrize("path", files("runs"), ids=lambda p: p.name)
def test_runs_never_import_protocols(path: Path) -> None:
    assert not {m for m in imports_of(path) if m.startswith("lexicoord.protocols")}


#: Every module of the web package outside the protocol adapters, new ones included as they are added.
GENERIC_WEB = sorted(p.name for p in (SRC / "web").glob("*.py")) + ["adapters/base.py"]


@pytest.mark.parametrize("name", GENERIC_WEB)
def test_the_generic_room_imports_no_protocol(name: str) -> None:
    path = SRC / "web" / name
    bad = {m for m in imports_of(path) if m.startswith(("lexicoord.protocols", "lexicoord.web.adapters.coordination"))}
    assert not bad, f"web/{name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", files("protocols"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_protocols_never_import_the_layers_above_them(path: Path) -> None:
    above = {m for m in imports_of(path) if m.startswith(("lexicoord.runs", "lexicoord.web", "lexicoord.cli",
                                                           "lexicoord.analysis"))}
    assert not above, f"{path} imports {sorted(above)}"


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
