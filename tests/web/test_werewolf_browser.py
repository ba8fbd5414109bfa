"""Werewolf in real browsers: ``lexicoord serve`` on the embedded model, two people in two headless Chromium
contexts among three embedded agents, through a night and a day, with every WebSocket frame each page
receives kept and searched for the secrets it must not hold.

The room is created on the start page (the protocol and its rules picked from what the server offers). Each
deal comes from a secret seed; the leader re-deals (ends the game, starts the next) until one of the two
people is the wolf and the other a villager, as people at a table might (3 chances in 10 a deal: thirty deals
all miss about once in 40,000). Screenshots go to
``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.web.test_browser import browser, playwright, server, shot  # noqa: F401 - fixtures used by name

pytestmark = pytest.mark.embedded
HOSTILE = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"
MARK = "WOLFMARK-BROWSER"
RULES = {"wolves": "1", "seers": "1", "witches": "0", "guards": "0", "max_days": "1", "wolf_turns": "1",
         "discussion_rounds": "1"}


def frames_of(page: Any) -> list[str]:
    """Every text frame the page's WebSockets receive from now on (a reload opens a new socket: kept too)."""
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    return frames


def states(frames: list[str], number: int) -> list[tuple[str, dict[str, Any]]]:
    """The state frames of game ``number``: each as received, and parsed."""
    out = []
    for f in frames:
        msg = json.loads(f)
        if msg["type"] == "state" and (msg["room"].get("game") or {}).get("number") == number:
            out.append((f, msg))
    return out


def role_on(page: Any) -> str:
    playwright.expect(page.locator("#ww-seat")).to_be_visible(timeout=20_000)
    return str(page.locator("#ww-seat").inner_text())


def test_two_people_and_embedded_agents_play_werewolf(server, browser) -> None:  # noqa: F811
    base, _ = server
    ann = browser.new_context().new_page()
    bob = browser.new_context().new_page()
    errors: list[str] = []
    for page in (ann, bob):
        page.on("pageerror", lambda e: errors.append(str(e)))
    seen = {"Ann": frames_of(ann), "Bob": frames_of(bob)}
    ann.goto(base + "/")
    ann.select_option("#protocol", "werewolf")
    ann.click("#add-agent")
    assert ann.locator("select[name=agent-model]").count() == 3
    for name, value in RULES.items():
        ann.fill(f"input[name={name}]", value)
    ann.select_option("select[name=last_words]", "none")
    ann.click("#create-room")
    ann.wait_for_url("**/r/**")
    ann.fill("input[name=name]", "Ann")
    ann.click("#join-button")
    playwright.expect(ann.locator("#start")).to_be_visible()
    bob.goto(ann.locator("#invite").input_value())
    bob.fill("input[name=name]", "Bob")
    bob.click("#join-button")
    playwright.expect(ann.locator("#people-box")).to_contain_text("Bob")
    playwright.expect(ann.locator("#ww-rules")).to_contain_text("Werewolves 1, seers 1, witches 0, guards 0")
    shot(ann, "werewolf-1-lobby")

    # Deal until one of the two people is the wolf.
    for number in range(1, 31):
        ann.click("#start")
        playwright.expect(ann.locator("#phase-box")).to_contain_text(f"Game {number}")
        roles = {"Ann": role_on(ann), "Bob": role_on(bob)}
        # One person the wolf, the other a plain villager (the seer an agent, whose results no page may see).
        if sum("werewolf" in r for r in roles.values()) == 1 and not any("seer" in r for r in roles.values()):
            break
        ann.click("#end-game")
        playwright.expect(ann.locator("#start")).to_be_visible(timeout=60_000)
    else:
        pytest.fail("thirty deals without one person the wolf and the other a villager")
    wolf, other = ("Ann", "Bob") if "werewolf" in roles["Ann"] else ("Bob", "Ann")
    pages = {"Ann": ann, "Bob": bob}
    assert "You are the werewolf" in roles[wolf] and "werewolf" not in roles[other]

    deadline = time.time() + 420
    shots: set[str] = set()
    reloaded = False
    while time.time() < deadline:
        if all(p.locator("#ww-outcome").is_visible() for p in pages.values()):
            break
        for who, page in pages.items():
            form = page.locator("#ww-request")
            if not form.is_visible():
                continue
            kind = form.get_attribute("data-kind")
            if kind == "speak":
                wolves = "wolves" in form.inner_text().lower()
                page.fill("#ww-speech", f"{MARK} {HOSTILE}" if wolves else f"{who} says good day {HOSTILE}")
                if f"speak-{wolves}" not in shots:
                    shots.add(f"speak-{wolves}")
                    shot(page, f"werewolf-2-{'night' if wolves else 'day'}-{who}")
                page.click("#ww-speak")
                if who == other and not wolves and not reloaded:
                    page.reload()  # the seat and its view come back with the same token
                    reloaded = True
            elif kind:
                choices = page.locator("input[name=ww-target]")
                values = [choices.nth(i).get_attribute("value") for i in range(choices.count())]
                pick = next((v for v in values if v not in ("abstain", "Ann", "Bob")), "abstain") \
                    if kind == "kill_vote" else "abstain"
                page.check(f"input[name=ww-target][value='{pick}']")
                page.click("#ww-act")
        time.sleep(0.3)
    else:
        pytest.fail("the game did not finish within 420 s")

    for page in pages.values():
        playwright.expect(page.locator("#ww-wins")).to_contain_text(f"of {number} games", timeout=20_000)
        assert page.evaluate("window.pwned") is None
    shot(pages[wolf], "werewolf-3-over-wolf")
    shot(pages[other], "werewolf-3-over-other")
    assert errors == []

    # The frames themselves: before the end, the wolves' channel reached the wolf's page only, and no
    # page received the seer's results; afterwards both pages received everything.
    for who in pages:
        game = states(seen[who], number)
        before = [f for f, s in game if not s["room"]["revealed"]]
        after = [f for f, s in game if s["room"]["revealed"]]
        assert before and after, who
        assert any(MARK in f for f in before) == (who == wolf), who
        assert not any('"t": "check"' in f for f in before), f"{who} received the seer's result"
        assert MARK in after[-1] and '"t": "night"' in after[-1], who
        days = {e["when"] for e in json.loads(after[-1])["you"]["game"]["log"]}
        assert {"Night 1", "Day 1"} <= days, days
    # Once over, both pages hold the same whole record (the agent seer's checks, if it made any, included).
    final = {who: json.loads(states(seen[who], number)[-1][0])["you"]["game"]["log"] for who in pages}
    assert final["Ann"] == final["Bob"] and any(e["t"] == "night" for e in final["Ann"])
    # The page shows the hostile speech as text (it ran nothing, checked above).
    playwright.expect(pages[other].locator("#ww-log")).to_contain_text(f"{MARK} <script>window.pwned=1</script>")
