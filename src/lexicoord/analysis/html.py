"""Self-contained HTML report pages, rendered through Jinja2 with autoescape on.

Every text a page shows (a run's name, an item, a model's reply, a coined term, a player's speech) comes
from people or models, so none of it may become markup: the templates escape every value they are given.
The page shell with its inline CSS, the table, the figure and the term board are shared templates in
``lexicoord/analysis/templates``; each protocol's page (``templates/report.html`` in the protocol's own
package) extends the shell. A page loads nothing from outside: its style is inline and its figures are
inlined SVG, so one file is the whole report.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from lexicoord.errors import LexicoordError

#: The package whose ``templates`` folder holds the shared pieces (``page.html``, ``macros.html``).
SHARED = "lexicoord.analysis"
#: What matplotlib writes into every SVG it saves (its creator, in the file's metadata).
_MATPLOTLIB = re.compile(r"<dc:title>Matplotlib v[0-9]")


@cache
def environment(package: str) -> Environment:
    """The templates of ``package`` (its ``templates`` folder), then the shared ones, escaping every value.

    Undefined names fail rather than render as nothing, so a page never silently drops what it should say.
    """
    loaders = [PackageLoader(package, "templates")] if package != SHARED else []
    return Environment(loader=ChoiceLoader([*loaders, PackageLoader(SHARED, "templates")]), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render(package: str, template: str = "report.html", **context: Any) -> str:
    """A whole page: ``template`` of ``package`` rendered with ``context``, every value escaped."""
    return environment(package).get_template(template).render(**context)


def inline_svg(path: Path) -> Markup:
    """A figure's ``<svg>`` element, without the XML prologue, to place in a page as it is.

    This is the only content a report takes unescaped, and only a figure of our own plotting: matplotlib
    wrote it (every figure goes through :func:`lexicoord.analysis.figures.save_figure`), and matplotlib's
    SVG writer escapes every text it places (tick labels, titles, legends and the comments naming them), so
    a model's or a person's words on a figure cannot become markup. A file that matplotlib did not write
    is refused rather than trusted.
    """
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    if start < 0 or not _MATPLOTLIB.search(text):
        raise LexicoordError(f"{path} is not a figure written by matplotlib; a report inlines only its own figures.")
    return Markup(text[start:])  # safe by matplotlib's own escaping, as said above
