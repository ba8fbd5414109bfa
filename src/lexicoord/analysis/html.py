"""Self-contained HTML report pages: every reported text escaped, figures inlined, no external file."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 64rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } svg { max-width: 100%; height: auto; } .muted { color: #666; }
.warning { color: #8a4b00; background: #fff4e0; padding: .3em .6em; }
figure { display: inline-block; width: 31rem; max-width: 100%; margin: 0.5rem; } pre { white-space: pre-wrap; }
"""


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def board_table(snapshot: Sequence[dict[str, Any]]) -> str:
    """A term board's snapshot (as a ``terms_shared`` event holds it) as a table; empty when it is empty."""
    rows = [[x.get("term", ""), x.get("definition", ""), (x.get("provenance") or {}).get("agent", "")] for x in snapshot]
    return table(["term", "definition", "coined by"], rows) if rows else ""


def inline_svg(path: Path) -> str:
    """An SVG file's ``<svg>`` element, without the XML prologue, to place in a page."""
    text = path.read_text(encoding="utf-8")
    return text[text.find("<svg"):]


def page(title: str, body: str) -> str:
    """A whole page; ``title`` is escaped here, ``body`` must be built from escaped parts."""
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")
