"""The run viewer in a real browser: ``lexicoord serve`` on a store holding a real COGENT study (played by the
runner with scripted models) and a long synthetic episode, read in headless Chromium (Debian's, driven by
Playwright). Screenshots go to ``test-artifacts/browser/viewer-*.png``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lexicoord.runs.store import Store
from tests.conftest import free_port
from tests.web.test_browser import browser, playwright, shot  # noqa: F401 - fixtures used by name
from tests.web.test_viewer_api import HOSTILE, cogent_run, synthetic_run

expect = playwright.expect


@pytest.fixture(scope="module")
def viewer_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``lexicoord serve`` as a user starts it, on a store that already holds runs."""
    home = tmp_path_factory.mktemp("viewer")
    db = home / "runs.db"
    asyncio.run(cogent_run(db))
    synthetic_run(Store(str(db)), "long", 3, big=1000)
    port = free_port()
    log = (home / "server.log").open("w")
    exe = Path(sys.executable).with_name("lexicoord")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port), "--db", str(db), "--model", "scripted/echo"],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "LEXICOORD_HOME": str(home)})
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        if proc.poll() is not None:
            pytest.fail(f"lexicoord serve exited: {(home / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/api/runs", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        pytest.fail("lexicoord serve did not answer within 60 s")
    yield base, db
    proc.terminate()
    proc.wait(15)
    log.close()


def watched(chromium: Any) -> tuple[Any, list[str]]:
    """A fresh page, and the script errors and console errors it raises (none expected)."""
    page = chromium.new_context().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page, errors


def test_a_real_episode_reads_as_its_transcript(viewer_server: tuple[str, Path], browser: Any) -> None:  # noqa: F811
    base, db = viewer_server
    page, errors = watched(browser)
    page.goto(f"{base}/runs")
    expect(page.locator("#runs-table")).to_contain_text("study")
    expect(page.locator("#runs-table")).to_contain_text("cogent")
    shot(page, "viewer-1-runs")
    # A campaign writing meanwhile: its run is there on the next look.
    synthetic_run(Store(str(db)), "fresh", 2)
    page.reload()
    expect(page.locator("#runs-table")).to_contain_text("fresh")

    page.click("a[href='/runs/study']")
    page.wait_for_url("**/runs/study")
    expect(page.locator("#episode-count")).to_have_text("(2 match)")
    expect(page.locator("#run-report")).to_contain_text("lexicoord report study --db sqlite:")
    page.select_option("select[name='setting:variant']", "variant=cogent")
    expect(page.locator("#episode-count")).to_have_text("(1 match)")
    assert "setting=variant%3Dcogent" in page.url, "the filter is in the address, to share or reload"
    expect(page.locator(".episode-row")).to_contain_text("variant=cogent")
    shot(page, "viewer-2-episodes")

    page.locator(".episode-row a").first.click()
    page.wait_for_url("**/episodes/*")
    transcript = page.locator("#transcript")
    expect(transcript.locator("li.ev").first).to_be_visible()
    seqs = [int(s) for s in transcript.locator("li.ev").evaluate_all("els => els.map(e => e.dataset.seq)")]
    assert seqs == list(range(len(seqs))) and len(seqs) > 10, "every event, in order"
    # Hostile replies are shown as text, never run.
    expect(transcript).to_contain_text("<script>window.pwned=1</script>")
    assert transcript.locator("script, img").count() == 0
    assert page.evaluate("window.pwned") is None
    # Who may see each event.
    expect(transcript.locator("li.ev-term_candidate").first.locator(".aud")).to_have_text("seen by A")
    expect(transcript.locator("li.ev-terms_shared").first.locator(".aud")).to_have_text("seen by everyone")
    expect(transcript.locator("li.ev-model_call").first.locator(".aud-agents")).to_be_visible()
    # The board as it stands at the last event shown, and how it grew.
    expect(page.locator("#board")).to_contain_text("eggleft")
    expect(page.locator("#board")).to_contain_text("sellprice")
    expect(page.locator("#board-steps")).to_contain_text("rejected")
    # A model call opens to its prompt, raw reply and usage (fetched when opened).
    call = transcript.locator("li.ev-model_call").first
    assert call.locator(".msg").count() == 0
    call.locator("details.more > summary").click()
    expect(call.locator(".msg").first).to_be_visible()
    expect(call.locator(".raw-reply")).not_to_be_empty()
    expect(call.locator(".usage")).to_contain_text("prompt tokens")
    shot(page, "viewer-3-episode")
    hostile_reply = transcript.locator("li.ev-model_call", has_text="pwned").first
    hostile_reply.locator("details.more > summary").click()
    expect(hostile_reply.locator(".raw-reply")).to_contain_text(HOSTILE)
    assert page.evaluate("window.pwned") is None
    assert not errors, errors


def test_a_long_episode_is_read_a_page_at_a_time(viewer_server: tuple[str, Path], browser: Any) -> None:  # noqa: F811
    base, _ = viewer_server
    page, errors = watched(browser)
    page.goto(f"{base}/runs/long")
    page.locator(".episode-row a", has_text="item-0").click()
    page.wait_for_url("**/episodes/*")
    items = page.locator("#transcript li.ev")
    expect(items).to_have_count(100)

    def shown() -> list[int]:
        return [int(s) for s in items.evaluate_all("els => els.map(e => e.dataset.seq)")]

    assert page.locator("#events-earlier").is_disabled()
    for n in range(1, 5):
        page.click("#events-later")
        expect(items.last).to_have_attribute("data-seq", str(100 * (n + 1) - 1))
    assert shown() == list(range(200, 500)), "at most three pages on the page: the first ones were dropped"
    expect(page.locator("#transcript-span")).to_contain_text("events 200–499 of 1000; 300 on the page")
    page.click("#events-earlier")
    expect(items.first).to_have_attribute("data-seq", "100")
    assert shown() == list(range(100, 400))
    page.click("#events-last")
    expect(items.last).to_have_attribute("data-seq", "999")
    assert shown() == list(range(900, 1000)) and page.locator("#events-later").is_disabled()
    expect(items.filter(has_text="seen by the wolves").first).to_be_visible()
    shot(page, "viewer-4-long-episode")
    assert not errors, errors


def test_the_page_moves_are_off_until_a_page_and_its_board_are_in(
        viewer_server: tuple[str, Path], browser: Any) -> None:  # noqa: F811
    base, _ = viewer_server
    page, errors = watched(browser)
    boards: list[Any] = []  # the board requests, held until the test lets each one answer

    page.goto(f"{base}/runs/long")
    page.locator(".episode-row a", has_text="item-0").click()
    page.wait_for_url("**/episodes/*")
    items = page.locator("#transcript li.ev")
    expect(items).to_have_count(100)
    later = page.locator("#events-later")
    expect(later).to_be_enabled()
    page.route("**/board?*", lambda route: boards.append(route))
    for last in ("199", "299"):
        later.click()
        expect(items.last).to_have_attribute("data-seq", last)
        assert later.is_disabled(), "the next page's events are shown, its board is not yet"
        deadline = time.monotonic() + 10
        while not boards and time.monotonic() < deadline:
            page.wait_for_timeout(20)  # the page may ask for its board after its events are in
        assert len(boards) == 1, "the page asked for its board once"
        assert later.is_disabled(), "its board still out, the move stays off"
        boards.pop().continue_()
        expect(later).to_be_enabled()
    assert not boards and not errors, errors
