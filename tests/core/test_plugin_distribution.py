"""A protocol shipped as a distribution of its own (``tests/core/plugin_dist``: its own ``pyproject.toml`` and
entry point) gets its commands, its report and its room on the start page, with no line of lexicoord changed.

The distribution is installed the way an installer lays it out: the package on a folder of ``sys.path`` beside
a ``.dist-info`` whose ``entry_points.txt`` is written from the distribution's own ``pyproject.toml``. Every
check runs ``lexicoord`` as a user does, in a fresh process that finds the protocol by its entry point alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

DIST = Path(__file__).with_name("plugin_dist")
ROOT = Path(__file__).resolve().parents[2]
LEXICOORD = Path(sys.executable).with_name("lexicoord")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def install(target: Path) -> None:
    """The package and its metadata, as an installer lays them out (the entry points from pyproject.toml)."""
    project = tomllib.loads((DIST / "pyproject.toml").read_text())["project"]
    shutil.copytree(DIST / "same_word_game", target / "same_word_game")
    info = target / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines += [f"[{group}]", *(f"{name} = {target_}" for name, target_ in entries.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("plugin")
    install(home / "site")
    path = os.pathsep.join(p for p in (str(home / "site"), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "LEXICOORD_HOME": str(home),
            "LEXICOORD_DB": str(home / "runs.db")}


def lexicoord(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LEXICOORD), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_lexicoord_itself_names_no_such_protocol() -> None:
    """The proof holds only if nothing of the plugin is in lexicoord's own source."""
    src = ROOT / "src" / "lexicoord"
    assert not [p for p in src.rglob("*") if p.is_file() and p.suffix in {".py", ".js", ".txt", ".toml"}
                and ("same-word" in p.read_text(errors="ignore") or "same_word" in p.read_text(errors="ignore"))]


def test_the_plugin_gets_its_commands(installed) -> None:
    listed = lexicoord(installed, "protocols")
    assert listed.returncode == 0 and "same-word" in listed.stdout, listed.stdout + listed.stderr
    helped = lexicoord(installed, "--help")
    assert "same-word" in helped.stdout, helped.stdout
    own = lexicoord(installed, "same-word", "--help")
    assert own.returncode == 0 and "Play the built-in things" in own.stdout, own.stdout + own.stderr
    # Without the distribution on the path, the command does not exist: it came from the entry point.
    bare = lexicoord({**installed, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}, "same-word", "--help")
    assert bare.returncode != 0


def test_lexicoord_plugins_chooses_the_distributions_that_load(installed) -> None:
    name = tomllib.loads((DIST / "pyproject.toml").read_text())["project"]["name"]
    none = lexicoord({**installed, "LEXICOORD_PLUGINS": ""}, "protocols")
    assert none.returncode == 0 and "│ same-word" not in none.stdout and "coordination" in none.stdout, none.stdout
    assert f"protocol plugin same-word of {name} not loaded: LEXICOORD_PLUGINS leaves it out" in none.stdout
    named = lexicoord({**installed, "LEXICOORD_PLUGINS": f"other, {name.upper().replace('-', '_')}"}, "protocols")
    assert "same-word" in named.stdout and "not loaded" not in named.stdout, named.stdout


def test_the_plugin_plays_and_gets_its_report(installed, tmp_path) -> None:
    played = lexicoord(installed, "same-word", "run", "--model", "scripted/first", "--run", "sw", "--items", "2")
    assert played.returncode == 0 and "2 played, 0 failed" in played.stdout, played.stdout + played.stderr
    shown = lexicoord(installed, "runs", "show", "sw")
    assert shown.returncode == 0 and "same-word" in shown.stdout, shown.stdout + shown.stderr
    report = lexicoord(installed, "report", "sw", "--out", str(tmp_path / "r"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert "Same word: sw" in report.stdout and "agreement" in report.stdout
    written = json.loads((tmp_path / "r" / "same_word.json").read_text())
    assert written["games"] == 2 and 0 <= written["agreed"] <= 2
    # Its own page, from its own template on lexicoord's shared shell: one document, a row per game.
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.count("<html") == 1 and "<h1>Same word: sw</h1>" in page and page.count("<tr>") == 3


@pytest.fixture(scope="module")
def server(installed, tmp_path_factory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("serve")
    port = free_port()
    log = (home / "server.log").open("w")
    proc = subprocess.Popen([str(LEXICOORD), "serve", "--port", str(port), "--db", str(home / "live.db"),
                             "--model", "scripted/first", "--protocol", "coordination", "--protocol", "same-word"],
                            env=installed, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"lexicoord serve exited: {(home / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/api/offer", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        pytest.fail("lexicoord serve did not answer within 60 s")
    yield base
    proc.terminate()
    proc.wait(15)
    log.close()


def test_the_plugin_is_offered_and_serves_its_own_page_part(server) -> None:
    offer = httpx.get(f"{server}/api/offer").json()
    [mine] = [p for p in offer["protocols"] if p["name"] == "same-word"]
    assert mine["title"] == "Same word: name a thing alike"
    script = httpx.get(f"{server}/adapters/same-word.js")
    assert script.status_code == 200 and script.text == (DIST / "same_word_game" / "room.js").read_text()


def test_a_person_opens_the_plugins_room_in_chromium(server) -> None:
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_context().new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + "/")
            expect(page.locator("#protocol option")).not_to_have_count(0)
            titles = page.eval_on_selector_all("#protocol option", "os => os.map(o => o.textContent)")
            assert "Same word: name a thing alike" in titles
            page.select_option("#protocol", "same-word")
            page.click("#create-room")
            page.wait_for_url("**/r/**")
            page.fill("input[name=name]", "Ann")
            page.click("#join-button")
            # Drawn by the plugin's own room.js, fetched from /adapters/same-word.js.
            expect(page.locator("#same-word-title")).to_have_text("Same word")
            expect(page.locator("#same-word-phase")).to_contain_text("phase: lobby")
            assert not errors, errors
        finally:
            browser.close()
