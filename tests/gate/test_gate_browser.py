"""The person's page for real: ``lexicoord gate serve`` as the command sets it up (its app, its guarded uvicorn)
on a loopback port, scripted models, and Debian's ``chromium`` driven headless by Playwright (no browser download).

A pipeline's check asks; the person opens ``answer_path`` on a phone-sized screen, sees the instruction (markup
in it shown as text, never run) and the question, and taps an option: the page shows the verdict, and the gate
has it, with the person's answer among its clarifications. A second check asks, is answered in the person's own
words, asks again, and is refused with "Don't do it". Screenshots go to ``test-artifacts/browser/gate-*.png``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from lexicoord.cli.app import app as cli
from lexicoord.gate import Gate, Verdict
from lexicoord.gate.http import KEY_ENV
from tests.conftest import free_port
from tests.gate.conftest import proposal, scripted
from tests.web.test_browser import ARTIFACTS, browser, playwright  # noqa: F401  (the browser fixture)

HOSTILE = "Bring me the cup <img src=x onerror=alert(1)> <script>alert(2)</script>"
CUPS = ["the red cup", "the blue cup"]
#: Two checks in turn: the first asks once and is clear; the second asks, then asks again.
SCRIPT = {"agent": [proposal("ambiguous", "Which cup?"), proposal("ambiguous", "Which plants?")],
          "agent-2": [proposal("clear"), proposal("ambiguous", "How much water?")]}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


class Served:
    """The server's address, its gate, and the event loop the gate's checks run on."""

    def __init__(self, base: str, gate: Gate, loop: asyncio.AbstractEventLoop) -> None:
        self.base, self.gate, self.loop = base, gate, loop

    def get(self, gate_id: str) -> Verdict:
        """``gate.get``, run on the server's loop (where the check lives)."""
        return asyncio.run_coroutine_threadsafe(self.gate.get(gate_id), self.loop).result(15)

    def check(self, instruction: str, **body: Any) -> dict[str, Any]:
        r = httpx.post(f"{self.base}/api/gate/check", json={"instruction": instruction, **body}, timeout=30)
        assert r.status_code == 200, r.text
        return dict(r.json())


@contextlib.contextmanager
def gate_serving(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """``lexicoord gate serve`` on a free loopback port, run in a thread on a loop of its own."""
    config = home / "gate.toml"
    config.write_text(f'policy = "single"\nmodels = ["{scripted(SCRIPT)}"]\nclarifications = 2\n')
    monkeypatch.delenv(KEY_ENV, raising=False)
    captured: list[uvicorn.Config] = []
    port = free_port()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(uvicorn.Server, "run", lambda self, sockets=None: captured.append(self.config))
        mp.setattr("lexicoord.collector.tune_for_long_runs", lambda: None)  # keeps the test process's gc as it is
        result = CliRunner().invoke(cli, ["gate", "serve", "--port", str(port), "--db", str(home / "gate.db"),
                                          "--config", str(config)])
    assert result.exit_code == 0 and captured, result.output
    assert "No API key" in result.output  # loopback, no LEXICOORD_GATE_KEY
    server = uvicorn.Server(captured[0])
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(server.serve(),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield Served(f"http://127.0.0.1:{port}", captured[0].app.state.gate, loop)
    finally:
        server.should_exit = True
        thread.join(15)
        loop.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"gate-{name}.png"), full_page=True)


def open_page(browser: Any, url: str) -> tuple[Any, list[str]]:  # noqa: F811  (the fixture's value)
    page = browser.new_context(**PHONE).new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
    page.goto(url)
    return page, problems


def test_a_person_answers_on_the_page(browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    expect = playwright.expect
    with gate_serving(tmp_path, monkeypatch) as served:
        asked = served.check(HOSTILE, context="A kitchen; <b>two</b> cups on the table.", candidates=CUPS)
        assert asked["status"] == "ask" and asked["answer_path"]
        page, problems = open_page(browser, served.base + asked["answer_path"])
        expect(page.locator("#question")).to_have_text("Which cup?")
        # The markup in the instruction and the context is shown as text, never made into elements or run.
        expect(page.locator("#instruction")).to_have_text(HOSTILE)
        expect(page.locator("#context")).to_have_text("A kitchen; <b>two</b> cups on the table.")
        assert page.locator("#instruction img, #instruction script, #context b, img").count() == 0
        options = page.locator("#options button")
        expect(options).to_have_text(CUPS)
        for button in (options.first, page.locator("#send-text"), page.locator("#refuse")):  # a thumb's size
            box = button.bounding_box()
            assert box is not None and box["height"] >= 44 and box["width"] >= 300, box
        expect(page.locator("#refuse")).to_have_text("Don't do it")
        shot(page, "1-asks")
        page.get_by_role("button", name="the blue cup").click()
        expect(page.locator("#outcome")).to_have_attribute("data-status", "clear")
        expect(page.locator("#outcome")).to_contain_text("Clear")
        expect(page.locator("#status")).to_have_text("Clear")
        expect(page.locator("#history")).to_contain_text("the blue cup")
        shot(page, "2-clear")
        verdict = served.get(asked["gate_id"])
        assert verdict.status == "clear"
        assert [(c.question, c.choice) for c in verdict.clarifications] == [("Which cup?", "the blue cup")]
        page.reload()  # the link still shows the verdict, and asks nothing more
        expect(page.locator("#outcome")).to_have_attribute("data-status", "clear")
        assert page.locator("#options").count() == 0
        assert not problems, problems

        # A second check: answered in the person's own words, it asks again, and the person says no.
        second = served.check("Water the plants.")
        page, problems = open_page(browser, served.base + second["answer_path"])
        expect(page.locator("#question")).to_have_text("Which plants?")
        assert page.locator("#options").count() == 0  # no options offered: a free answer
        page.locator("#send-text").click()  # nothing written yet: the page says so and sends nothing
        expect(page.locator("#error")).to_contain_text("Write an answer first")
        page.fill("#answer-text", "The ones on the <i>balcony</i>")
        page.locator("#send-text").click()
        expect(page.locator("#asks-again")).to_be_visible()
        expect(page.locator("#question")).to_have_text("How much water?")
        expect(page.locator("#history")).to_contain_text("The ones on the <i>balcony</i>")
        shot(page, "3-asks-again")
        page.locator("#refuse").click()
        expect(page.locator("#outcome")).to_have_attribute("data-status", "refuse")
        expect(page.locator("#outcome")).to_contain_text("will not be done")
        shot(page, "4-refused")
        refused = served.get(second["gate_id"])
        assert refused.status == "refuse" and refused.clarifications[0].text == "The ones on the <i>balcony</i>"
        assert refused.clarifications[-1].refused
        assert not problems, problems

        # A link without its token shows nothing of the check.
        page, _ = open_page(browser, f"{served.base}/g/{asked['gate_id']}")
        assert "cup" not in page.content() and "not valid" in page.content()
