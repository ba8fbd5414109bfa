"""The documentation's pages as text, so a test checks a claim against the page that makes it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """A page under ``docs/`` by its path there (``"protocols/cogent.md"``); a moved page fails loudly."""
    return (DOCS / name).read_text(encoding="utf-8")


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")
