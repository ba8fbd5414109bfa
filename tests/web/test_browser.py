"""The real thing: ``lexicoord serve`` on the embedded model, two people in two headless Chromium contexts.

Debian's ``chromium`` is driven by Playwright (no browser download). Screenshots
of every stage are kept under ``test-artifacts/browser/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

playwright = pytest.importorskip("playwright.sync_api", reason="install the test extra: pip install -e '.[test]'")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MODEL = "local/smollm2-135m"
pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``lexicoord serve`` as a user starts it, on loopback, with a private store."""
    home = tmp_path_factory.mktemp("serve")
    db = home / "live.db"
    port = free_port()
    log = (home / "server.log").open("w")
    exe = Path(sys.executable).with_name("lexicoord")
    proc = subprocess.Popen(
        [str(exe), "serve", "--port", str(port), "--db", str(db), "--model", MODEL, "--agents", "2"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "LEXICOORD_HOME": str(home)},
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        if proc.poll() is not None:
            pytest.fail(f"lexicoord serve exited: {(home / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/api/offer", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        pytest.fail("lexicoord serve did not answer within 40 s")
    yield base, db
    proc.terminate()
    proc.wait(15)
    log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium")
    with playwright.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def open_room(browser, base: str, mode: str) -> tuple[object, object]:
    """Ann creates a room with two agents on the embedded model and joins; Bob joins by the link."""
    ann = browser.new_context().new_page()
    bob = browser.new_context().new_page()
    errors: list[str] = []
    for page in (ann, bob):
        page.on("pageerror", lambda e: errors.append(str(e)))
    ann.goto(base + "/")
    ann.select_option("#protocol", "coordination")
    ann.select_option("select[name=mode]", mode)
    assert ann.locator("select[name=agent-model]").count() == 2
    ann.fill("input[name=clarification_bound]", "1")
    ann.click("#create-room")
    ann.wait_for_url("**/r/**")
    ann.fill("input[name=name]", "Ann")
    ann.click("#join-button")
    playwright.expect(ann.locator("#start")).to_be_visible()
    bob.goto(ann.locator("#invite").input_value())
    bob.fill("input[name=name]", "Bob")
    bob.click("#join-button")
    playwright.expect(ann.locator("#people-box")).to_contain_text("Bob")
    playwright.expect(bob.locator("#phase-box")).to_contain_text("Waiting for Ann")
    shot(ann, f"{mode}-1-lobby")
    ann._errors = errors  # type: ignore[attr-defined]
    return ann, bob


HOSTILE = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"


def play_out(ann, bob, mode: str, reload_bob: bool = False) -> None:
    """Both people answer whatever they are asked until the game is over; Bob's page may reload once."""
    deadline = time.time() + 240
    reloaded = not reload_bob
    shots = 0
    while time.time() < deadline:
        if ann.locator("#outcome").is_visible() and bob.locator("#outcome").is_visible():
            return
        for page, who in ((ann, "Ann"), (bob, "Bob")):
            if page.locator("#submit-choice").is_visible():
                page.locator(".option-label").first.click()
                page.fill("#justification", f"{HOSTILE} {who}")
                if shots < 2:
                    shot(page, f"{mode}-2-choosing-{who}")
                    shots += 1
                page.click("#submit-choice")
                if who == "Bob" and not reloaded:
                    page.reload()  # the seat and the state come back with the same token
                    reloaded = True
            if page.locator("#send-clarification").is_visible():
                page.fill("#statement", "I mean the <b>first</b> meaning")
                page.click("#send-clarification")
        time.sleep(0.3)
    pytest.fail("the game did not finish within 240 s")


def check_finished(ann, bob, mode: str) -> None:
    for page in (ann, bob):
        playwright.expect(page.locator("#winloss")).to_contain_text("of 1 games", timeout=20_000)
        assert page.evaluate("window.pwned") is None
        # The hostile justification is shown as text, never run.
        playwright.expect(page.locator("#game-box")).to_contain_text("<script>window.pwned=1</script>")
    assert ann.locator("#depth-chart rect").count() >= 2
    shot(ann, f"{mode}-3-over-Ann")
    shot(bob, f"{mode}-3-over-Bob")
    assert ann._errors == []  # type: ignore[attr-defined]


def test_two_people_and_embedded_agents_play_in_automatic_mode(server, browser) -> None:
    base, db = server
    ann, bob = open_room(browser, base, "automatic")
    ann.click("#start")
    playwright.expect(ann.locator("#game-box .sentence mark")).to_be_visible()
    play_out(ann, bob, "automatic", reload_bob=True)
    check_finished(ann, bob, "automatic")
    # Agents on the embedded model really moved: their choices are in the revealed rounds.
    for agent in ("agent-1", "agent-2"):
        playwright.expect(ann.locator("#game-box")).to_contain_text(agent)
    with ann.expect_download() as download:
        ann.click("text=export CSV")
    assert "Bob" in Path(download.value.path()).read_text()
    # The game is an episode of the room's run, reported like any campaign.
    from lexicoord.runs.store import Store

    [run] = [r.id for r in Store(str(db)).runs() if r.id.startswith("room-")]
    report = subprocess.run(
        [str(Path(sys.executable).with_name("lexicoord")), "coordination", "report", run, "--db", str(db),
         "--out", str(db.parent / "report")],
        capture_output=True, text=True, timeout=120,
    )
    assert report.returncode == 0 and "1 games" in report.stdout, report.stdout + report.stderr
    assert (db.parent / "report" / "report.html").exists()


def test_two_people_and_embedded_agents_play_in_manual_mode(server, browser) -> None:
    base, _ = server
    ann, bob = open_room(browser, base, "manual")
    ann.click("#start")
    ann.fill("#sentence", "They met at the bank before noon.")
    ann.click("#words >> text=bank")
    # Every player proposes, people as well as agents.
    for page, meaning, why in ((ann, "the side of a river", "people meet by rivers"),
                               (bob, "a place that keeps money", "banks open before noon")):
        playwright.expect(page.locator("#proposal-meaning")).to_be_visible(timeout=30_000)
        page.fill("#proposal-meaning", meaning)
        page.fill("#proposal-why", why)
        page.click("#submit-proposal")
    shot(bob, "manual-1a-proposed")
    playwright.expect(ann.locator("#confirm")).to_be_visible(timeout=120_000)
    playwright.expect(bob.locator("#phase-box")).to_contain_text("Proposed meanings")
    playwright.expect(bob.locator("#phase-box")).to_contain_text("the side of a river — Ann")
    options = ann.locator("#options input.option")
    assert {options.nth(i).input_value() for i in range(options.count())} >= {"the side of a river",
                                                                             "a place that keeps money"}
    shot(ann, "manual-1b-confirm")
    ann.click("#confirm")
    playwright.expect(bob.locator("#game-box .sentence")).to_contain_text("They met at the bank before noon.")
    play_out(ann, bob, "manual")
    check_finished(ann, bob, "manual")


def test_the_start_page_opens_on_the_coordination_game_under_titles_people_read(server, browser) -> None:
    """A newcomer meets the coordination game first, and every game under its name, never a protocol id."""
    base, _ = server
    page = browser.new_context().new_page()
    page.goto(base + "/")
    playwright.expect(page.locator("#protocol option")).not_to_have_count(0)  # no eval: the page's CSP forbids it
    select = page.locator("#protocol")
    assert select.input_value() == "coordination"
    shown = page.eval_on_selector("#protocol", "s => s.options[s.selectedIndex].textContent")
    assert shown == "Coordination game: agree on what a word means"
    ids = page.eval_on_selector_all("#protocol option", "os => os.map(o => o.value)")
    titles = page.eval_on_selector_all("#protocol option", "os => os.map(o => o.textContent)")
    assert ids[0] == "coordination" and {"debate", "cogent", "werewolf"} <= set(ids)
    assert not set(titles) & set(ids), f"a raw protocol id is shown: {titles}"
    assert all(" " in t for t in titles), titles
    # The form below is the coordination game's own (its dataset and mode), not another game's.
    playwright.expect(page.locator("select[name=dataset]")).to_be_visible()
    playwright.expect(page.locator("#protocol-summary")).to_contain_text("LexiCoord")
    shot(page, "start-page")
