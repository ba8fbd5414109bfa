"""Report pages: rendered from templates with autoescape on, so text from people and models (a run's name, an
item, a reply, a coined term, a player's speech) is shown as text on every protocol's page and never becomes
markup; each page is one document that loads nothing from outside; only our own figures are inlined as is;
and the templates are package data a fresh install ships."""

from __future__ import annotations

import html
import itertools
import re
import sqlite3
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from jinja2 import UndefinedError

import lexicoord
from lexicoord.analysis.html import environment, inline_svg, render
from lexicoord.analysis.report import report_run
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import LexicoordError
from lexicoord.models import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.cogent import CogentStudy
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.protocols.debate import DebateStudy
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import generated_instructions
from tests.protocols.cogent.test_rules import ITEM as COGENT_ITEM
from tests.protocols.werewolf.test_rules import play
from tests.protocols.werewolf.test_visibility import random_policy

SRC = Path(lexicoord.__file__).parent
PROTOCOLS = ("coordination", "debate", "cogent", "werewolf")


def mark(place: str) -> str:
    """Hostile text naming where it was put: markup, a quote and an ampersand."""
    return f"<script>alert('{place}' & 1)</script>"


def rename(db: Path, old: str, new: str) -> None:
    """Give a stored run a name the store would refuse today, as one stored by an older release may have."""
    with sqlite3.connect(db) as con:
        con.execute("UPDATE runs SET id = ? WHERE id = ?", (new, old))
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if any(col[1] == "run_id" for col in con.execute(f'PRAGMA table_info("{table}")')):
                con.execute(f'UPDATE "{table}" SET run_id = ? WHERE run_id = ?', (new, old))
    con.close()


class Cells(HTMLParser):
    """The text of every table cell."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self.open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self.open = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        self.open = self.open and tag != "td"

    def handle_data(self, data: str) -> None:
        if self.open:
            self.cells[-1] += data


def cells(fragment: str) -> list[str]:
    parser = Cells()
    parser.feed(fragment)
    return parser.cells


class Outside(HTMLParser):
    """Every tag of a page, and every attribute that would load or link something."""

    LINKS = {"src", "href", "xlink:href", "srcset", "action", "formaction", "data", "poster", "background"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.links: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [(tag, name, value or "") for name, value in attrs if name in self.LINKS]


def check_page(page: str, shown: list[str]) -> None:
    """``page`` shows each hostile text of ``shown`` as text, holds no markup of any, and loads nothing."""
    assert "<script" not in page.lower(), "no hostile text became a script tag"
    assert page.count("&lt;script&gt;") >= len(shown), "each hostile text appears escaped"
    text = html.unescape(page)
    for place in shown:
        assert mark(place) not in page, f"the {place} is escaped"
        assert mark(place) in text, f"the {place} is on the page, as text"
    parser = Outside()
    parser.feed(page)
    assert page.startswith("<!doctype html>\n") and page.rstrip().endswith("</html>")
    assert parser.tags.count("html") == 1 and parser.tags.count("body") == 1, "one document"
    assert not {"script", "link", "iframe", "object", "embed", "img", "base"} & set(parser.tags)
    assert all(value.startswith("#") for _, _, value in parser.links), "only links inside the page"
    assert parser.tags.count("svg") >= 1, "the figures are inlined"
    assert "@import" not in page and not re.search(r"url\(\s*['\"]?(?!#)", page), "no style from outside"
    laid_out(page)


def laid_out(page: str) -> None:
    """The page opens with its tables and figures; the configuration (and the published numbers) come last,
    collapsed; every table scrolls inside the page rather than widening it."""
    config = page.index('<details class="end"><summary>Configuration</summary>')
    assert page.index("<table") < config and page.index("<svg") < config, "tables and figures first"
    assert page.count("<table") == page.count('<div class="scroll"><table'), "every table scrolls in the page"
    assert page.rfind("<table", 0, config) > -1 and "</details>" in page[config:]
    if "published numbers beside this run" in page:
        assert page.index("<details class=\"end\"><summary>The paper") > page.index("<svg")


async def test_a_coordination_page_shows_hostile_text_escaped(tmp_path) -> None:
    sense = mark("sense")

    def reply(messages: Any, config: Any) -> dict[str, str]:
        return {"choice": sense, "justification": mark("justification")}

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("h", reply)), "scripted/h")
    lineup = [AgentSpec(name=n, model="scripted/h") for n in ("lead", "p1", "p2")]
    item = {"id": mark("item"), "sentence": mark("sentence"), "word": "word", "options": [sense, "plain sense"],
            "intended": sense, "open": False}
    store = Store(str(tmp_path / "h.db"))
    await Runner(store, CoordinationGame(), models=pool).run(
        "h", grid([item], [lineup], settings=[{"clarification_bound": 1}]), config={"data": mark("settings")})
    rename(tmp_path / "h.db", "h", mark("run"))
    page = report_run(store, mark("run"), tmp_path / "out").files["html"].read_text(encoding="utf-8")
    check_page(page, ["run", "item", "sense", "settings"])


async def test_a_debate_page_shows_hostile_text_escaped(tmp_path) -> None:
    item = next(i.as_task() for i in generated_instructions(1, seed=0) if i.ambiguous)
    item["instruction"] = mark("instruction")

    def reply(messages: Any, config: Any) -> dict[str, str]:
        return {"reasoning": mark("reasoning"), "verdict": "ambiguous", "question": mark("question")}

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("h", reply)), "scripted/h")
    store = Store(str(tmp_path / "h.db"))
    await Runner(store, DebateStudy(), models=pool).run(
        "h", grid([item], [[AgentSpec(name="a", model="scripted/h")]], settings=[{"condition": "single"}]),
        config={"data": mark("settings")})
    rename(tmp_path / "h.db", "h", mark("run"))
    page = report_run(store, mark("run"), tmp_path / "out").files["html"].read_text(encoding="utf-8")
    check_page(page, ["run", "instruction", "reasoning", "question", "settings"])


async def test_a_cogent_page_shows_hostile_text_escaped(tmp_path) -> None:
    term = mark("term")

    def reply(messages: Any, config: Any) -> str:
        prompt, agent = messages[-1].content, current_agent.get() or "?"
        if "[PRIVATE NOTE" in prompt:  # a coining pass: the term is used in PART 1 and defined in PART 2
            return f"[PART 1] The {term} count is 9.\n[PART 2]\n{term} = {mark('definition')}\n" if agent == "A" \
                else "[PART 1] Nothing new.\n[PART 2]\n"
        return f"{agent} says {mark('reply')} and {term}.\n#### 18"

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("h", reply)), "scripted/h")
    lineup = [AgentSpec(name=n, model="scripted/h") for n in ("A", "B")]
    item = {**COGENT_ITEM, "id": mark("item"), "question": f"{mark('question')} {COGENT_ITEM['question']}"}
    settings = [{"variant": "cogent", "task": "gsm8k", "rounds": 2, "passes": 1, "coin_rounds": 1}]
    store = Store(str(tmp_path / "h.db"))
    await Runner(store, CogentStudy(), models=pool).run("h", grid([item], [lineup], settings=settings),
                                                       config={"data": mark("settings")})
    rename(tmp_path / "h.db", "h", mark("run"))
    page = report_run(store, mark("run"), tmp_path / "out").files["html"].read_text(encoding="utf-8")
    check_page(page, ["run", "item", "question", "reply", "term", "definition", "settings"])
    assert term in cells(page.split("board shared", 1)[1]), "the coined term, accepted, is on the board as text"


async def test_a_werewolf_page_shows_hostile_text_escaped(tmp_path) -> None:
    count = itertools.count()

    def speech(agent: str, role: str, prompt: str) -> str:
        term = mark(f"term{next(count)}")
        return f"[PART 1] {mark('speech')} says {term} matters.\n[PART 2]\n{term} = {mark('definition')}\n"

    await play(tmp_path, random_policy, speech, seed=2, condition="cogent", wolf_turns=1, max_days=2)
    rename(tmp_path / "w.db", "w", mark("run"))
    page = report_run(Store(str(tmp_path / "w.db")), mark("run"), tmp_path / "out").files["html"].read_text(
        encoding="utf-8")
    check_page(page, ["run", "speech", "term0", "definition"])
    assert mark("term0") in cells(page.split("Games, replayed", 1)[1]), "a term pool shows the term as text"


def test_the_shared_pieces_escape_every_value_and_take_only_figures_as_they_are(tmp_path) -> None:
    macros = environment("lexicoord.analysis").get_template("macros.html").module
    table = str(macros.table([mark("head")], [[mark("cell"), 3]]))
    assert table == ('<div class="scroll"><table><thead><tr><th>&lt;script&gt;alert(&#39;head&#39; &amp; 1)'
                     "&lt;/script&gt;</th></tr></thead><tbody><tr><td>&lt;script&gt;alert(&#39;cell&#39; &amp; 1)"
                     "&lt;/script&gt;</td><td>3</td></tr></tbody></table></div>")
    board = str(macros.board([{"term": mark("term"), "definition": "d", "provenance": {"agent": mark("coiner")}}]))
    assert "<script" not in board and board.count("&lt;script&gt;") == 2 and board.count("<tr>") == 2
    assert str(macros.board([])) == "", "an empty board shows nothing"
    # A string is never taken as markup, even one that looks like a figure; a figure of ours is.
    assert str(macros.figure("<svg><script>x</script></svg>")) == \
        "<figure>&lt;svg&gt;&lt;script&gt;x&lt;/script&gt;&lt;/svg&gt;</figure>"
    from lexicoord.analysis.figures import _pyplot, save_figure

    fig, ax = _pyplot().subplots()
    ax.set_title(mark("title"))
    svg = inline_svg(save_figure(fig, tmp_path / "ours")[1])
    assert svg.startswith("<svg") and "<script" not in svg, "matplotlib escaped the title it drew"
    assert str(macros.figure(svg)).startswith("<figure><svg"), "our own figure is inlined as it is"


def test_an_svg_that_matplotlib_did_not_write_is_refused(tmp_path) -> None:
    path = tmp_path / "other.svg"
    path.write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
                    encoding="utf-8")
    with pytest.raises(LexicoordError, match="not a figure written by matplotlib"):
        inline_svg(path)


def test_a_page_is_one_document_with_its_title_escaped() -> None:
    page = render("lexicoord.protocols.coordination", "page.html")
    assert page.startswith("<!doctype html>\n<html") and page.endswith("</body></html>\n") and "<style>" in page
    with pytest.raises(UndefinedError, match="undefined"):  # a value a page needs, missing, fails rather than vanishes
        render("lexicoord.protocols.coordination")


def test_the_templates_ship_with_the_package() -> None:
    """Every template is matched by a package-data glob of pyproject.toml, so a fresh install has it; each
    protocol's page extends the shared shell."""
    pyproject = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["lexicoord"]
    templates = sorted(p.relative_to(SRC).as_posix() for p in SRC.glob("**/templates/*") if p.is_file())
    assert {"analysis/templates/page.html", "analysis/templates/macros.html"} <= set(templates)
    for name in PROTOCOLS:
        own = SRC / "protocols" / name / "templates" / "report.html"
        assert own.is_file() and '{% extends "page.html" %}' in own.read_text(encoding="utf-8")
    shipped = {p.relative_to(SRC).as_posix() for g in globs for p in SRC.glob(g)}  # as setuptools reads them
    assert [t for t in templates if t not in shipped] == []
    assert "jinja2" in " ".join(pyproject["project"]["dependencies"]).lower()


@pytest.mark.parametrize("module", ["analysis/html.py", *(f"protocols/{p}/report.py" for p in PROTOCOLS)])
def test_no_report_module_builds_html_from_strings(module: str) -> None:
    source = (SRC / module).read_text(encoding="utf-8")
    found = [s for s in ("<h", "<table", "<p>", "<li", "<details", "<td", "html.escape", "|safe") if s in source]
    assert found == [], f"{module} writes markup itself: {found}; it belongs in a template"
