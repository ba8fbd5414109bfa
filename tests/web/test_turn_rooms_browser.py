"""The leader-follower debate and COGENT played for real: ``lexicoord serve`` on the embedded model, a person in headless
Chromium (Debian's), agents on SmolLM2. Screenshots are kept under ``test-artifacts/browser/``."""

from __future__ import annotations

import time

import pytest

from tests.web.test_browser import browser, playwright, server, shot  # noqa: F401  (fixtures)

pytestmark = pytest.mark.embedded


def create(page, base: str, protocol: str, fields: dict[str, str], checks: dict[str, bool] | None = None) -> None:
    """Create a room from the start page's form for ``protocol`` and join it as Ann."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/")
    page.select_option("#protocol", protocol)
    for name, value in fields.items():
        page.fill(f"[name={name}]", value)
    for name, on in (checks or {}).items():
        page.set_checked(f"[name={name}]", on)
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.fill("input[name=name]", "Ann")
    page.click("#join-button")
    playwright.expect(page.locator("#start")).to_be_visible()
    page._errors = errors  # type: ignore[attr-defined]


def answer_until_over(page, replies: dict[str, dict[str, str]], name: str, limit: float = 420) -> int:
    """Answer every request (by kind) until the game's outcome is in the history; returns the replies sent."""
    deadline, sent = time.time() + limit, 0
    while time.time() < deadline:
        if page.locator("#history li").count():
            return sent
        if page.locator("#submit-reply").is_visible():
            kind = page.locator("#request h3").inner_text().removeprefix("You are asked to ").strip()
            for field, value in replies[kind].items():
                if field.startswith("choice:"):
                    page.check(f"#field-{field.removeprefix('choice:')}-{value}")
                else:
                    page.fill(f"#field-{field}", value)
            if sent == 0:
                shot(page, f"{name}-1-request")
            page.click("#submit-reply")
            sent += 1
            playwright.expect(page.locator("#submit-reply")).to_be_hidden(timeout=30_000)
        time.sleep(0.3)
    pytest.fail(f"the {name} game did not end within {limit:.0f} s")


def test_a_person_leads_a_debate_with_two_embedded_followers(server, browser) -> None:  # noqa: F811
    base, _ = server
    ann = browser.new_context().new_page()
    create(ann, base, "debate", {"rounds": "1"})
    ann.click("#start")
    playwright.expect(ann.locator("#game-box")).to_contain_text("instruction")
    hostile = "<img src=x onerror=window.pwned=1>"
    sent = answer_until_over(ann, {"propose": {"reasoning": f"The count is unclear {hostile}", "choice:verdict": "1",
                                               "question": "How many red blocks should I move?"}}, "debate")
    assert sent == 1, "one round: the leader proposes once"
    playwright.expect(ann.locator("#history")).to_contain_text("round(s)")
    transcript = ann.locator("#transcript").inner_text()
    assert "leader proposes ambiguous: How many red blocks should I move?" in transcript
    assert transcript.count("agree") >= 2, "both embedded followers' feedback reaches the leader"
    assert hostile in transcript and ann.evaluate("window.pwned") is None, "text stays text"
    shot(ann, "debate-2-over")
    assert not ann._errors  # type: ignore[attr-defined]


def test_a_person_sits_as_cogent_b_beside_an_embedded_a(server, browser) -> None:  # noqa: F811
    base, _ = server
    ann = browser.new_context().new_page()
    create(ann, base, "cogent", {"question": "What is 6 plus 7?", "answer": "13", "rounds": "1", "passes": "1",
                                 "coin_rounds": "1", "max_tokens": "64"})
    ann.click("#start")
    playwright.expect(ann.locator("#game-box")).to_contain_text("What is 6 plus 7?")
    sent = answer_until_over(ann, {
        "init": {"text": "6 plus 7 is 13. Answer: 13"},
        "coin": {"text": "[PART 1] sevensum takes 6 up to 13.\n[PART 2]\nsevensum = adding seven to a number"},
        "use": {"text": "By sevensum, 6 becomes 13. Answer: 13"},
    }, "cogent")
    assert sent == 3, "B answers in round 0, coins once, and uses once"
    history = ann.locator("#history").inner_text()
    assert "final answer" in history and "the answer is 13" in history
    transcript = ann.locator("#transcript").inner_text()
    assert "sevensum" in transcript and "the board is shared" in transcript
    shot(ann, "cogent-2-over")
    assert not ann._errors  # type: ignore[attr-defined]
