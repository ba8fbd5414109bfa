"""``lexicoord mcp``: the agreement gate as an MCP server over stdio, for a coding agent to check instructions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lexicoord.cli.options import DbOption, run_async
from lexicoord.errors import ConfigError

if TYPE_CHECKING:
    pass


def mcp(
    config: Annotated[
        Path | None, typer.Option("--config", help="A gate configuration (TOML: policy, models, bounds).")
    ] = None,
    db: DbOption = None,
    policy: Annotated[
        str | None,
        typer.Option("--policy", help="single, debate, coalition, conformal or adaptive (over the configuration's)."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="A model the gate's seats are filled from (repeatable; over the "
                                           "configuration's; default: the embedded model)."),
    ] = None,
) -> None:
    """Serve the agreement gate over MCP on stdio: a coding agent checks an instruction before acting on it."""
    from lexicoord.gate.settings import settings_from

    settings = settings_from(config, policy, model)
    from lexicoord.gate.gate import Gate

    try:
        from lexicoord.gate.mcp_server import serve_stdio
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise ConfigError("`lexicoord mcp` needs the MCP SDK: pip install 'lexicoord[mcp]'.") from None

    gate = Gate(settings=settings, db=db)  # a store that cannot be opened is one sentence now, before serving
    run_async(serve_stdio(gate))
