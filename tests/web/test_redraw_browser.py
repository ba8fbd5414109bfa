"""A room page redraws on every update of its room (a seat thinking, a move, someone joining). What a person is in
the middle of must survive that: the field they type in stays the same element, keeps the focus and the caret, and
the text goes on where it was; the button under their pointer stays the one they pressed. Played for real:
``lexicoord serve`` as the command sets it up, on loopback, scripted agents (these are checks of the page, not of a
model), and Debian's ``chromium`` driven headless.

The redraw is caused the way it happens in a room: a second person opens the link and joins, which sends everyone
the room's new state while Ann is half-way through her reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import serving
from tests.web.test_browser import browser, playwright  # noqa: F401  (the browser fixture)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home: Path = tmp_path_factory.mktemp("redraw")
    with serving(home / "live.db", "--model", "scripted/first") as port:
        yield f"http://127.0.0.1:{port}"


def open_as_ann(browser, base: str, protocol: str, fields: dict[str, str], start: bool = True):  # noqa: F811
    """Ann creates a room of ``protocol`` with the default agents from the start page, joins, and starts a game."""
    page = browser.new_context().new_page()
    page._errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda e: page._errors.append(str(e)))  # type: ignore[attr-defined]
    page.goto(base + "/")
    page.select_option("#protocol", protocol)
    for name, value in fields.items():
        page.fill(f"[name={name}]", value)
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.fill("input[name=name]", "Ann")
    page.click("#join-button")
    if start:
        page.click("#start")
    return page


def bob_joins(browser, ann) -> None:  # noqa: F811
    """Bob opens Ann's link and joins; Ann's page has redrawn once it lists him."""
    bob = browser.new_context().new_page()
    bob.goto(ann.locator("#invite").input_value())
    bob.fill("input[name=name]", "Bob")
    bob.click("#join-button")
    playwright.expect(ann.locator("#people-box")).to_contain_text("Bob")


def type_across_a_redraw(browser, ann, field: str) -> None:  # noqa: F811
    """Type half a reply into ``field``, have the room redraw, type the rest: one element, focused, whole text."""
    box = ann.locator(field)
    box.click()
    ann.keyboard.type("the first ")
    ann.evaluate(f"document.querySelector({field!r}).dataset.probe = 'before'")
    ann.evaluate(f"document.querySelector({field!r}).setSelectionRange(4, 4)")  # the caret after "the "
    bob_joins(browser, ann)
    assert ann.evaluate(f"document.querySelector({field!r}).dataset.probe") == "before", "the field was rebuilt"
    assert ann.evaluate(f"document.activeElement === document.querySelector({field!r})"), "the focus was taken"
    ann.keyboard.type("very ")
    assert box.input_value() == "the very first "


#: Per room: the start page's fields, the text field and the choice of its request form, its send button, and
#: where the sent move shows (the debate through the shared turn rooms' part, the coordination game through its own).
FORMS = {
    "debate": ({"rounds": "1"}, "#field-reasoning", "#field-verdict-0", "#submit-reply", "#transcript", "leader proposes"),
    "coordination": ({"clarification_bound": "1"}, "#justification", "#opt-0", "#submit-choice", "#game-box",
                     "the very first"),
}


@pytest.mark.parametrize("protocol", FORMS)
def test_a_half_typed_reply_its_choice_and_its_send_button_survive_a_redraw(browser, base, protocol) -> None:  # noqa: F811
    fields, text, choice, button, shown_in, sent = FORMS[protocol]
    ann = open_as_ann(browser, base, protocol, fields)
    playwright.expect(ann.locator(button)).to_be_visible()
    ann.evaluate(f"document.querySelector({button!r}).dataset.probe = 'before'")
    ann.check(choice)
    type_across_a_redraw(browser, ann, text)
    assert ann.evaluate(f"document.querySelector({button!r}).dataset.probe") == "before", "the button was rebuilt"
    assert ann.locator(choice).is_checked(), "the choice made before the redraw is still made"
    ann.click(button)
    playwright.expect(ann.locator(shown_in)).to_contain_text(sent, timeout=20_000)
    assert not ann._errors  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", [*FORMS, "werewolf"])
def test_the_leaders_start_button_is_the_same_element_after_someone_joins(browser, base, protocol) -> None:  # noqa: F811
    """Start is pressed and released on one element even when the room redraws in between."""
    ann = open_as_ann(browser, base, protocol, {}, start=False)
    playwright.expect(ann.locator("#start")).to_be_visible()
    ann.evaluate("document.querySelector('#start').dataset.probe = 'before'")
    bob_joins(browser, ann)
    assert ann.evaluate("document.querySelector('#start').dataset.probe") == "before"


def test_the_people_box_is_left_alone_while_a_game_plays(browser, base) -> None:  # noqa: F811
    """A game's updates redraw the game, not the people box: the leader's button beside Bob and the invite are the
    same elements after a game was played through (only someone joining, leaving or taking the lead redraws it)."""
    ann = open_as_ann(browser, base, "coordination", {"clarification_bound": "1"}, start=False)
    bob_joins(browser, ann)
    bob_row = "#people-box li[data-person=Bob] button"
    playwright.expect(ann.locator(bob_row).first).to_be_visible()
    ann.evaluate(f"document.querySelector({bob_row!r}).dataset.probe = 'before'; "
                 "document.querySelector('#invite').dataset.probe = 'before'")
    ann.click("#start")
    playwright.expect(ann.locator("#submit-choice")).to_be_visible()
    ann.check("#opt-0")
    ann.fill("#justification", "the first")
    ann.click("#submit-choice")
    playwright.expect(ann.locator("#game-box")).to_contain_text("announced")
    assert ann.evaluate(f"document.querySelector({bob_row!r}).dataset.probe") == "before"
    assert ann.evaluate("document.querySelector('#invite').dataset.probe") == "before"


def test_a_move_made_while_the_connection_is_down_says_it_was_not_sent(browser, base) -> None:  # noqa: F811
    """The page does not swallow a click it could not send: it says so, and sends nothing later by itself."""
    ann = open_as_ann(browser, base, "debate", {"rounds": "1"})
    playwright.expect(ann.locator("#request-prompt")).to_be_visible()
    ann.fill("#field-reasoning", "unclear")
    ann.evaluate("ws.onclose = null; ws.close()")  # the connection drops, and the page does not reconnect yet
    playwright.expect(ann.locator("#submit-reply")).to_be_visible()
    ann.click("#submit-reply")
    playwright.expect(ann.locator("#error")).to_contain_text("Not connected, so that was not sent")
    assert ann.locator("#transcript").inner_text().count("leader proposes") == 0
