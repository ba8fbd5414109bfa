"""What participants see, in headless Chromium (Debian's), on ``lexicoord study serve`` with scripted agents: the
quiz's attempts left, a partner who dropped out shown as a seat now played by an agent (never as "left"), and
a completion page whose long code and address each stay one unbroken line on a narrow screen.

Scripted agents play the model seats (no model's behaviour is looked at here), so the test takes about 30 s,
most of it the study's wait before an absence counts (15 s after a start, then the grace period).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.studies.conftest import values
from tests.studies.test_study_browser import CODES, NAME, REDIRECT, Console, Participant, Server, serving, shot, texts
from tests.web.test_browser import browser, playwright  # noqa: F401  (the browser fixture)

#: A code as long as a study file allows, with hyphens where a page could break the line.
DROPPED = "DROPPED-0123456789-ABCDEFGHIJ-KLMNOPQRST-UVWXYZ-0123456789-ABCDE"
assert len(DROPPED) == 64
GRACE = 5

#: The in-process tests' study (tests/studies/conftest.py) as a file: groups of two people and one agent, a
#: short grace period, and the longest dropped code a file allows.
STUDY = values(
    name=NAME, game={"seat_timeout": 120, "clarification_bound": 0},
    group={"people": 2, "games": 1, "agents": [{"name": "Ava", "model": "scripted/first"}]},
    dropout={"grace": GRACE, "idle": False},
    completion={"codes": {**CODES, "dropped": DROPPED}, "redirect": f"{REDIRECT}{{code}}"})


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from serving(tmp_path, tomli_w.dumps(STUDY))


def lines(page: Any, selector: str) -> int:
    """How many lines the text of ``selector`` is laid out on."""
    return int(page.locator(selector).evaluate(
        "el => { const r = document.createRange(); r.selectNodeContents(el); "
        "return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size; }"))


def test_quiz_attempts_a_dropped_partner_and_an_unbroken_completion_page(server: Server, browser) -> None:  # noqa: F811
    console = Console()
    server.start()
    p1, p2 = (Participant(browser, server, console, f"p{i}") for i in (1, 2))

    # The quiz says how many attempts are left, before the first and after a wrong one.
    p1.to_quiz()
    playwright.expect(p1.page.locator("#quiz-attempts")).to_have_text("2 attempts left")
    p1.quiz("Never")
    playwright.expect(p1.page.locator("#stage .error")).to_contain_text("not right")
    playwright.expect(p1.page.locator("#quiz-attempts")).to_have_text("1 attempt left (this is the last)")
    shot(p1.page, "pages-quiz-one-attempt-left")
    p1.quiz("All agree")
    playwright.expect(p1.page.locator("#lobby-status")).to_be_visible()

    p2.to_quiz()
    p2.quiz("All agree")
    for p in (p1, p2):
        playwright.expect(p.game.locator("#game-box .sentence mark")).to_be_visible(timeout=30_000)
    person2 = p1.game.locator("#people-box li[data-person='Person 2']")
    playwright.expect(person2).to_have_text("Person 2")

    # P2 closes the browser; after the grace period a model plays the seat, and P1's page says so.
    p2.context.close()
    p2.closed = True
    playwright.expect(person2).to_have_text("Person 2 — now played by an agent", timeout=(15 + GRACE + 20) * 1000)
    row = p1.game.locator("#game-box tr[data-player='Person 2'] td")
    playwright.expect(row.nth(0)).to_have_text("Person 2 — now played by an agent")
    playwright.expect(row.nth(1)).to_have_text("agent")
    assert not any("left" in t for t in texts(p1.game.locator("#people-box li")))
    shot(p1.page, "pages-partner-played-by-an-agent")

    # P2 opens their link again, on a phone's narrow screen: the completion page with the dropped code. The code
    # and the address back are each one line, whole, however narrow the page.
    phone = browser.new_context(viewport={"width": 320, "height": 640})
    page = phone.new_page()
    console.watch(page, "p2-phone")
    page.goto(p2.link)
    playwright.expect(page.locator("#code")).to_have_text(DROPPED, timeout=30_000)
    playwright.expect(page.locator("#redirect-address")).to_have_text(REDIRECT + DROPPED)
    playwright.expect(page.locator("#redirect")).to_have_attribute("href", REDIRECT + DROPPED)
    assert lines(page, "#code") == 1 and lines(page, "#redirect-address") == 1
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 320, f"the page is {width} px wide: the code scrolls in its own box, not the page"
    page.locator("#redirect-address").click()  # one click selects the whole address, nothing more
    assert page.evaluate("String(window.getSelection())") == REDIRECT + DROPPED
    shot(page, "pages-done-narrow")

    assert console.dialogs == [] and console.errors == [], (console.dialogs, console.errors)
    for context in (p1.context, phone):
        context.close()
