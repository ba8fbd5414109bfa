"""``lexicoord --help`` and a light command import no command module they do not run.

The property, not the time (``benchmarks/startup.py`` measures that): in a fresh process, listing the commands
leaves the store (SQLAlchemy, Alembic), the runner, the web server, the embedded model and the report's figures
out of ``sys.modules``; a command imports its own module only, when it is run or asked for its help; and what
goes wrong while that module loads is still one sentence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lexicoord.cli.app import BUILT_IN, Lexicoord, app, main
from lexicoord.cli.lazy import Lazy, protocol_commands
from lexicoord.core.registry import protocols

HEAVY = ("sqlalchemy", "alembic", "matplotlib", "llama_cpp", "fastapi", "lexicoord.runs.runner", "mcp")
COMMANDS = {"models", "runs", "rooms", "ask", "report", "protocols", "demo", "serve", "mcp", "coordination", "debate",
            "cogent", "werewolf"}

#: Runs ``lexicoord ARGS`` through its entry point in a fresh interpreter and prints what it printed, its exit
#: status and every module then imported.
PROBE = """
import contextlib, io, json, sys
sys.argv = ["lexicoord", *json.loads(sys.argv[1])]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        from lexicoord.cli.app import main
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"output": out.getvalue(), "code": code, "modules": sorted(sys.modules)}))
"""


def fresh(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def listed(output: str) -> set[str]:
    return {line.split()[1] for line in output.splitlines() if line.startswith("│ ") and len(line.split()) > 2}


def command_modules(modules: list[str]) -> set[str]:
    """The command modules among ``modules``: the built-in ones and every protocol's group."""
    return {m for m in modules if (m.startswith("lexicoord.cli.") and m.endswith("_cmd"))
            or (m.startswith("lexicoord.protocols.") and m.endswith(".cli"))}


def test_help_lists_every_command_with_no_command_module_nor_heavy_module_imported() -> None:
    seen = fresh("--help")
    assert seen["code"] == 0
    assert COMMANDS <= listed(seen["output"]), seen["output"]
    assert "coord" not in listed(seen["output"])  # the short form answers but is not listed
    assert not [m for m in HEAVY if m in seen["modules"]], [m for m in HEAVY if m in seen["modules"]]
    assert not command_modules(seen["modules"])
    # Each protocol's line is its registry summary, read from the entry points with none of its commands imported.
    for name, entry in protocols().items():
        assert f"{name}  " in seen["output"] and entry.summary[:60] in seen["output"]


def test_importing_the_command_imports_nothing_heavy() -> None:
    done = subprocess.run([sys.executable, "-c", "import json, sys, lexicoord.cli.app; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=120)
    modules = json.loads(done.stdout)
    assert not [m for m in HEAVY if m in modules] and not command_modules(modules)
    assert "lexicoord.core.registry" not in modules  # not even the protocols: a built-in command needs none


def test_a_built_in_command_imports_its_own_module_and_no_protocol(tmp_path: Path) -> None:
    seen = fresh("runs", "list", "--db", str(tmp_path / "r.db"))
    assert seen["code"] == 0 and "No runs in" in seen["output"]
    assert command_modules(seen["modules"]) == {"lexicoord.cli.runs_cmd"}
    assert "sqlalchemy" in seen["modules"]  # it opens a store ...
    assert not [m for m in ("lexicoord.runs.runner", "matplotlib", "fastapi", "llama_cpp") if m in seen["modules"]]
    assert not [m for m in seen["modules"] if m.startswith("lexicoord.protocols.")]  # ... and plays nothing


def test_a_protocol_group_is_imported_when_its_help_is_asked_for() -> None:
    seen = fresh("coordination", "--help")
    assert seen["code"] == 0 and "campaigns, reports, a game in the terminal" in seen["output"]
    assert {"lexicoord.protocols.coordination.cli"} <= command_modules(seen["modules"])
    assert not [m for m in ("lexicoord.protocols.debate.cli", "lexicoord.protocols.cogent.cli",
                            "lexicoord.protocols.werewolf.cli", "lexicoord.cli.serve_cmd") if m in seen["modules"]]


def test_each_declared_line_is_the_command_s_own_first_paragraph() -> None:
    """The listing is written from the declarations; loading each command shows they say what it says."""
    for lazy in BUILT_IN:
        command = lazy.load()
        assert command.name == lazy.name and not command.hidden
        assert (command.help or "").split("\n\n")[0].strip() == lazy.help, lazy.name
    summaries = {entry.summary for entry in protocols().values()}
    for lazy in protocol_commands():  # each protocol's group and its short forms, with the protocol's summary
        command = lazy.load()
        assert command.name == lazy.name and command.hidden == lazy.hidden and lazy.help in summaries


def test_a_typo_is_still_answered_with_the_nearest_names() -> None:
    result = CliRunner().invoke(app, ["rnus"])
    assert result.exit_code == 2 and "Did you mean 'runs'?" in result.output
    both = CliRunner().invoke(app, ["runss"])
    assert both.exit_code == 2 and "Did you mean 'runs', 'run'?" in both.output


BROKEN = {
    "config": ("from lexicoord.errors import ConfigError\nraise ConfigError('The broken command needs a key.')\n",
               "error: The broken command needs a key."),
    "refused": ("import errno\nraise PermissionError(errno.EACCES, 'Permission denied', '/somewhere/x')\n",
                "error: cannot use /somewhere/x: Permission denied."),
    "store": ("import sqlite3\nfrom sqlalchemy.exc import OperationalError\n"
              "raise OperationalError('SELECT 1', None, sqlite3.OperationalError('database is locked'))\n",
              "error: The store given by --db or LEXICOORD_DB is locked by another process"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_error_while_a_command_module_loads_is_one_sentence(kind: str, tmp_path: Path, capsys,
                                                               monkeypatch) -> None:
    source, said = BROKEN[kind]
    (tmp_path / f"broken_{kind}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(Lexicoord, "built_in", (*BUILT_IN, Lazy("broken", f"broken_{kind}:app", "Breaks.")))
    monkeypatch.setattr(sys, "argv", ["lexicoord", "broken", "--help"])
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err
    assert stop.value.code == 1 and err.startswith(said), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
