"""``lexicoord protocols``: the protocols installed, built-in and third-party alike."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.core.plugins import PLUGINS_VARIABLE
from lexicoord.core.registry import failed_protocols, skipped_protocols
from lexicoord.core.registry import protocols as installed

console = console_for()


def protocols() -> None:
    """Every installed protocol: its name, what it is, its settings, and whether it has a report and a live room."""
    table = Table()
    for col in ("protocol", "what", "settings", "report", "live room"):
        table.add_column(col, overflow="fold")
    for name, entry in sorted(installed().items()):
        settings = ", ".join(entry.rules().settings_model.model_fields)
        table.add_row(escape(name), escape(entry.summary), escape(settings), "yes" if entry.report else "–",
                      "yes" if entry.room else "–")
    console.print(table)
    for name, why in failed_protocols().items():
        console.print(f"[yellow]protocol plugin {escape(name)} failed to load: {escape(why)}[/yellow]")
    for name, dist in skipped_protocols().items():
        console.print(f"protocol plugin {escape(name)} of {escape(dist)} not loaded: {PLUGINS_VARIABLE} leaves it out",
                      highlight=False)
