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


def open_as_ann(browser, base: str, protocol: str, fields: dict[str, str], start: bool = True,  # noqa: F811
                choose: dict[str, str] | None = None):
    """Ann creates a room of ``protocol`` with the default agents from the start page (``fields`` typed, ``choose``
    picked from their lists), joins, and starts a game."""
    page = browser.new_context().new_page()
    page._errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda e: page._errors.append(str(e)))  # type: ignore[attr-defined]
    page.goto(base + "/")
    page.select_option("#protocol", protocol)
    for name, value in fields.items():
        page.fill(f"[name={name}]", value)
    for name, value in (choose or {}).items():
        page.select_option(f"select[name={name}]", value)
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.fill("input[name=name]", "Ann")
    page.click("#join-button")
    if start:
        page.click("#start")
    return page


def bob_joins(browser, ann, name: str = "Bob"):  # noqa: F811
    """Bob (or ``name``) opens Ann's link and joins; Ann's page has redrawn once it lists him. His page."""
    bob = browser.new_context().new_page()
    bob.goto(ann.locator("#invite").input_value())
    bob.fill("input[name=name]", name)
    bob.click("#join-button")
    playwright.expect(ann.locator(f"#people-box li[data-person={name}]")).to_be_visible()
    return bob


#: Bob's row on Ann's page, his dot once his page is connected, and the first of the leader's buttons beside him.
BOB = "#people-box li[data-person=Bob]"
BOB_ON, BOB_OFF, BOB_BUTTON = f"{BOB} .dot.on", f"{BOB} .dot:not(.on)", f"{BOB} button"


def probe(page, *selectors: str) -> None:
    for sel in selectors:
        page.evaluate(f"document.querySelector({sel!r}).dataset.probe = 'before'")


def probed(page, sel: str) -> bool:
    """The element ``sel`` finds is the one probed before (not one built since)."""
    return page.evaluate(f"document.querySelector({sel!r}).dataset.probe") == "before"


def type_across_a_redraw(browser, ann, field: str, who: str = "Bob"):  # noqa: F811
    """Type half a reply into ``field``, have the room redraw (``who`` joins), type the rest: one element,
    focused, whole text. The page of the one who joined."""
    box = ann.locator(field)
    box.click()
    ann.keyboard.type("the first ")
    probe(ann, field)
    ann.evaluate(f"document.querySelector({field!r}).setSelectionRange(4, 4)")  # the caret after "the "
    joined = bob_joins(browser, ann, who)
    assert probed(ann, field), "the field was rebuilt"
    assert ann.evaluate(f"document.activeElement === document.querySelector({field!r})"), "the focus was taken"
    ann.keyboard.type("very ")
    assert box.input_value() == "the very first "
    return joined


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
    probe(ann, button)
    ann.check(choice)
    type_across_a_redraw(browser, ann, text)
    assert probed(ann, button), "the button was rebuilt"
    assert ann.locator(choice).is_checked(), "the choice made before the redraw is still made"
    ann.click(button)
    playwright.expect(ann.locator(shown_in)).to_contain_text(sent, timeout=20_000)
    assert not ann._errors  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", [*FORMS, "werewolf"])
def test_the_leaders_start_button_is_the_same_element_after_someone_joins(browser, base, protocol) -> None:  # noqa: F811
    """Start is pressed and released on one element even when the room redraws in between."""
    ann = open_as_ann(browser, base, protocol, {}, start=False)
    playwright.expect(ann.locator("#start")).to_be_visible()
    probe(ann, "#start")
    bob_joins(browser, ann)
    assert probed(ann, "#start")


def test_the_people_box_is_left_alone_while_a_game_plays(browser, base) -> None:  # noqa: F811
    """A game's updates redraw the game, not the people box: Bob's dot (built afresh whenever the box is drawn),
    the leader's button beside him and the invite are the same elements after a game was played through."""
    ann = open_as_ann(browser, base, "coordination", {"clarification_bound": "1"}, start=False)
    bob_joins(browser, ann)
    playwright.expect(ann.locator(BOB_ON)).to_be_visible()  # joined, then connected: the box's last change
    probe(ann, BOB_ON, BOB_BUTTON, "#invite")
    ann.click("#start")
    playwright.expect(ann.locator("#submit-choice")).to_be_visible()
    ann.check("#opt-0")
    ann.fill("#justification", "the first")
    ann.click("#submit-choice")
    playwright.expect(ann.locator("#game-box")).to_contain_text("announced")
    assert probed(ann, BOB_ON), "the people box was drawn again during the game"
    assert probed(ann, BOB_BUTTON) and probed(ann, "#invite")


def test_the_people_boxs_buttons_stay_as_a_connection_drops_and_returns(browser, base) -> None:  # noqa: F811
    """Someone's dot going off and on again draws the people box again (a new dot); the leader's buttons beside
    them and the invite stay the same elements, so a click on one at that moment lands."""
    ann = open_as_ann(browser, base, "debate", {"rounds": "1"}, start=False)
    bob = bob_joins(browser, ann)
    playwright.expect(ann.locator(BOB_ON)).to_be_visible()
    probe(ann, BOB_ON, BOB_BUTTON, "#invite", f"{BOB}")
    link = bob.url
    bob.close()  # Bob's connection drops
    playwright.expect(ann.locator(BOB_OFF)).to_be_visible()
    assert not probed(ann, f"{BOB} .dot"), "the box was drawn again: the dot is a new one"
    again = bob.context.new_page()  # and returns: the same browser, so the same seat
    again.goto(link)
    playwright.expect(ann.locator(BOB_ON)).to_be_visible()
    assert probed(ann, BOB_BUTTON), "the button beside Bob was rebuilt"
    assert probed(ann, BOB) and probed(ann, "#invite")
    ann.locator(f"{BOB} button", has_text="make leader").click()
    playwright.expect(ann.locator(BOB)).to_contain_text("(leader)")
    assert not ann._errors  # type: ignore[attr-defined]


def test_the_manual_modes_forms_survive_a_redraw(browser, base) -> None:  # noqa: F811
    """The coordination game's manual mode: the leader's half-written sentence survives someone joining, and a
    half-written proposal survives another player's proposal arriving (both redraw the page)."""
    ann = open_as_ann(browser, base, "coordination", {"clarification_bound": "1"}, start=False, choose={"mode": "manual"})
    bob = bob_joins(browser, ann)
    ann.click("#start")
    cy = type_across_a_redraw(browser, ann, "#sentence", "Cy")  # a third person joins half-way
    ann.locator("#sentence").fill("They met at the bank before noon.")
    ann.click("#words >> text=bank")
    playwright.expect(ann.locator("#proposal-meaning")).to_be_visible(timeout=20_000)
    playwright.expect(bob.locator("#proposal-meaning")).to_be_visible(timeout=20_000)
    ann.locator("#proposal-meaning").click()
    ann.keyboard.type("the side of ")
    probe(ann, "#proposal-meaning", "#submit-proposal")
    bob.fill("#proposal-meaning", "a place that keeps money")
    bob.fill("#proposal-why", "banks open before noon")
    bob.click("#submit-proposal")
    playwright.expect(ann.locator("#proposal-status")).not_to_contain_text("Bob")  # Ann's page heard Bob's
    assert probed(ann, "#proposal-meaning") and probed(ann, "#submit-proposal"), "the proposal form was rebuilt"
    assert ann.evaluate("document.activeElement === document.querySelector('#proposal-meaning')")
    ann.keyboard.type("a river")
    assert ann.locator("#proposal-meaning").input_value() == "the side of a river"
    ann.fill("#proposal-why", "people meet by rivers")
    ann.click("#submit-proposal")
    cy.fill("#proposal-meaning", "a row of seats")
    cy.fill("#proposal-why", "a bank of seats")
    cy.click("#submit-proposal")
    playwright.expect(ann.locator("#confirm")).to_be_visible(timeout=20_000)
    assert not ann._errors  # type: ignore[attr-defined]


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
