"""Every command's ``--help`` as a person reads it: the help is rendered with rich's markup, which eats text in
square brackets (``lexicoord[ray]`` would read ``lexicoord``) and shows reStructuredText's double backticks as
they are, so neither may reach a page of help."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

from lexicoord.cli.app import app


def every_command() -> list[list[str]]:
    """The path of every command and group, lazy ones loaded."""
    root = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:  # typer's own click: a group is what lists commands
        found.append(path)
        if hasattr(command, "list_commands"):
            ctx = command.context_class(command, info_name=path[-1] if path else "lexicoord")
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name])

    walk(root, [])
    return found


def test_no_help_page_shows_double_backticks_and_brackets_survive() -> None:
    runner = CliRunner()
    paths = every_command()
    assert len(paths) > 30, paths
    pages = {}
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
        assert result.exit_code == 0, (path, result.output)
        pages[" ".join(path)] = result.output
        assert "``" not in result.output, f"lexicoord {' '.join(path)} --help shows reStructuredText markup"
    assert "the file's [smoke] table" in pages["run"] and "pip install 'lexicoord[ray]'" in pages["run"]
    assert "--dependency=afterany:ARRAY" in pages["runs wait"]
