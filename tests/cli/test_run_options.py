"""The options every ``run`` command shares are written once: each protocol's command, and a plugin's, gets the
same eight after its own, and hands them over as one ``RunOptions``."""

from __future__ import annotations

from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from lexicoord.cli.run_options import RunOptions, run_command
from lexicoord.core.registry import get_protocol

SHARED = ["--seed", "--concurrency", "--run", "--db", "--no-cache", "--option", "--print-file", "--dry-run"]


def options_of(app: typer.Typer, command: str) -> list[str]:
    group = typer.main.get_command(app)
    found = group.commands[command]  # type: ignore[attr-defined]
    return [opt for p in found.params for opt in p.opts if opt.startswith("--")]


@pytest.mark.parametrize(("protocol", "command"), [("coordination", "run"), ("debate", "run"), ("cogent", "run"),
                                                   ("werewolf", "run"), ("gate", "eval")])
def test_every_protocols_run_command_has_the_shared_options_once_after_its_own(protocol: str, command: str) -> None:
    names = options_of(get_protocol(protocol).command_group(), command)
    assert names[-len(SHARED):] == SHARED, names
    assert all(names.count(n) == 1 for n in SHARED)


def test_a_plugins_command_gets_them_and_reads_them_as_one_value() -> None:
    app = typer.Typer()
    seen: list[tuple[str, RunOptions]] = []

    @run_command(app, concurrency=3, seed_help="Seed of the deals.")
    def run(word: Annotated[str, typer.Option(help="The word.")] = "x", *, run: RunOptions) -> None:
        seen.append((word, run))

    @app.command("other")
    def other() -> None:  # a second command, so that typer keeps the group
        pass

    result = CliRunner().invoke(app, ["run", "--word", "hammer", "--seed", "7", "--run", "r1", "--no-cache",
                                      "-o", "timeout=30", "--dry-run"])
    assert result.exit_code == 0, result.output
    [(word, options)] = seen
    assert word == "hammer"
    assert options == RunOptions(seed=7, concurrency=3, run_name="r1", db=None, no_cache=True, option=["timeout=30"],
                                 print_file=False, dry_run=True)
    helped = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert "Seed of the deals." in helped.output and "--word" in helped.output
    assert CliRunner().invoke(app, ["run", "--concurrency", "0"]).exit_code == 2, "the shared checks hold"
