"""A protocol shipped as a distribution of its own (``tests/core/plugin_dist``: its own ``pyproject.toml`` and
entry point) gets every part a protocol entry names, with no line of lexicoord changed: its commands, its report,
and a room a person plays in a browser. Its experiment file and its study are checked in
``test_plugin_experiment.py`` and ``test_plugin_study.py``, on the same installation.

The distribution is installed the way an installer lays it out: the package on a folder of ``sys.path`` beside
a ``.dist-info`` whose ``entry_points.txt`` is written from the distribution's own ``pyproject.toml``. Every
check runs ``lexicoord`` as a user does, in a fresh process that finds the protocol by its entry point alone;
every model seat is scripted (these are tests of the protocol's seams, not of a model).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lexicoord.core.registry import ProtocolEntry
from lexicoord.web.adapters.turns import TURNS_SCRIPT
from tests.conftest import free_port, wait_until_answering
from tests.docs_pages import page as docs_page

DIST = Path(__file__).with_name("plugin_dist")
ROOT = Path(__file__).resolve().parents[2]
LEXICOORD = Path(sys.executable).with_name("lexicoord")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
#: What ``scripted/first`` names anything (the first value its sampler gives a string field).
SCRIPTED_WORD = "scripted reason 864"


def install(target: Path) -> None:
    """The package and its metadata, as an installer lays them out (the entry points from pyproject.toml)."""
    project = tomllib.loads((DIST / "pyproject.toml").read_text())["project"]
    shutil.copytree(DIST / "same_word_game", target / "same_word_game",
                    ignore=shutil.ignore_patterns("__pycache__"))
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
    # wide enough that rich never breaks a line the tests look for (a pipe gets 80 columns when COLUMNS says so)
    return {**os.environ, "PYTHONPATH": path, "LEXICOORD_HOME": str(home),
            "LEXICOORD_DB": str(home / "runs.db"), "COLUMNS": "200"}


def lexicoord(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LEXICOORD), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_lexicoord_itself_names_no_such_protocol() -> None:
    """The proof holds only if nothing of the plugin is in lexicoord's own source."""
    src = ROOT / "src" / "lexicoord"
    assert not [p for p in src.rglob("*") if p.is_file() and p.suffix in {".py", ".js", ".txt", ".toml"}
                and ("same-word" in p.read_text(errors="ignore") or "same_word" in p.read_text(errors="ignore"))]


def test_the_docs_list_every_file_of_the_distribution_with_its_lines() -> None:
    """``docs/writing-a-protocol.md`` shows the example's files as they are: every one, each with its line count."""
    listed = {path: int(n) for path, n in re.findall(r"^\| `([^`]+)` \| (\d+) \|", docs_page("writing-a-protocol.md"), re.M)}
    files = {str(p.relative_to(DIST)): len(p.read_text().splitlines()) for p in DIST.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and ".mypy_cache" not in p.parts}
    assert listed == files


#: Each optional field of an entry and the typed accessor that hands its part out (``None``: a plain value).
ACCESSORS = {"title": None, "task": "task_object", "statistics": "statistics_reader", "outcomes": "outcomes_reader",
             "report": "report_writer", "room": "room_adapter", "experiment": "plan", "items": "item_source",
             "cli": "command_group", "aliases": None}


def test_the_plugin_fills_every_field_of_its_entry(installed) -> None:
    """Every field lexicoord's entry has is filled, and each part loads through its typed accessor in a fresh
    process: a field added to :class:`ProtocolEntry` fails here until the example shows it."""
    assert {f.name for f in dataclasses.fields(ProtocolEntry)} - {"name", "summary", "protocol"} == set(ACCESSORS)
    script = (
        "import json\nfrom lexicoord.core.registry import get_protocol, load_protocols\nload_protocols()\n"
        "entry = get_protocol('same-word')\n"
        f"accessors = {ACCESSORS!r}\n"
        "def name(part): return getattr(part, '__name__', type(part).__name__)\n"
        "print(json.dumps({f: [bool(getattr(entry, f)), name(getattr(entry, m)()) if m else None]"
        " for f, m in accessors.items()}))\n")
    done = subprocess.run([sys.executable, "-c", script], env=installed, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert {f for f, (filled, _) in loaded.items() if not filled} == set(), loaded
    assert {f: kind for f, (_, kind) in loaded.items() if kind} == {
        "task": "Things", "statistics": "statistics", "outcomes": "outcomes", "report": "report",
        "room": "SameWordRoom", "experiment": "SameWordPlan", "items": "ThingSets", "cli": "Typer"}


def test_the_plugin_gets_its_commands(installed) -> None:
    listed = lexicoord(installed, "protocols")
    assert listed.returncode == 0 and "same-word" in listed.stdout, listed.stdout + listed.stderr
    helped = lexicoord(installed, "--help")
    assert "same-word" in helped.stdout, helped.stdout
    own = lexicoord(installed, "same-word", "run", "--help")
    assert own.returncode == 0 and "Play every thing" in own.stdout, own.stdout + own.stderr
    # Its own flags, then the eight every protocol's run shares (lexicoord.cli.run_options.run_command).
    for flag in ("--model", "--things", "--seats", "--seed", "--concurrency", "--run", "--db", "--no-cache",
                 "--option", "--print-file", "--dry-run"):
        assert flag in own.stdout, flag
    short = lexicoord(installed, "sw", "run", "--help")  # its alias
    assert short.returncode == 0 and "Play every thing" in short.stdout, short.stdout + short.stderr
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
    assert played.returncode == 0 and "run sw: 2 done, 0 failed" in played.stderr + played.stdout, \
        played.stdout + played.stderr
    again = lexicoord(installed, "same-word", "run", "--model", "scripted/first", "--run", "sw", "--items", "2")
    assert "0 done, 0 failed, 2 already done" in again.stderr + again.stdout, "a re-run resumes: nothing played twice"
    shown = lexicoord(installed, "runs", "show", "sw", "--transcript")
    assert shown.returncode == 0 and "same-word" in shown.stdout, shown.stdout + shown.stderr
    # Its own event types read back typed, each line as the event's own line() says it.
    assert f'names it "{SCRIPTED_WORD}"' in shown.stdout and f"agreed (p1: {SCRIPTED_WORD}" in shown.stdout
    report = lexicoord(installed, "report", "sw", "--out", str(tmp_path / "r"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert "Same word: sw" in report.stdout and "agreement" in report.stdout
    written = json.loads((tmp_path / "r" / "same_word.json").read_text())
    assert written["games"] == 2 and written["agreed"] == 2 and written["by_seats"] == {"2": {"games": 2, "agreed": 2}}
    # Its own page, from its own template on lexicoord's shared shell: one document, a row per game.
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.count("<html") == 1 and "<h1>Same word: sw</h1>" in page and page.count("<tr>") == 3


@pytest.fixture(scope="module")
def server(installed, tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """``lexicoord serve`` offering the coordination game and the plugin, agents on ``scripted/first``; its base
    address and its store."""
    home = tmp_path_factory.mktemp("serve")
    port = free_port()
    log = (home / "server.log").open("w")
    proc = subprocess.Popen([str(LEXICOORD), "serve", "--port", str(port), "--db", str(home / "live.db"),
                             "--model", "scripted/first", "--protocol", "coordination", "--protocol", "same-word"],
                            env=installed, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    wait_until_answering(proc, f"{base}/api/offer", home / "server.log", "lexicoord serve")
    yield base, home / "live.db"
    proc.terminate()
    proc.wait(15)
    log.close()


def test_the_plugin_is_offered_with_its_room_form_and_the_turn_rooms_page_part(server) -> None:
    base, _ = server
    offer = httpx.get(f"{base}/api/offer").json()
    [mine] = [p for p in offer["protocols"] if p["name"] == "same-word"]
    assert mine["title"] == "Same word: name a thing alike"
    fields = {f["name"]: f for f in mine["fields"]}
    assert fields["things"]["kind"] == "choice" and fields["things"]["choices"] == ["builtin"]  # its item source
    assert fields["max_tokens"]["kind"] == "int"
    script = httpx.get(f"{base}/adapters/same-word.js")
    own = (DIST / "same_word_game" / "room.js").read_text()
    assert script.status_code == 200 and script.text == f"{TURNS_SCRIPT.read_text()}\n;\n{own}", "shared, then its own"


def test_a_person_plays_two_games_of_the_plugin_in_chromium(server, installed, tmp_path) -> None:
    """Ann opens a room from the start page with the two default agents, presses Start, names the thing and
    loses; reads both agents' word in the transcript once the game is over; in the next game names it alike and
    wins. The room's history, its export and the report of its run all say so."""
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium")
    base, db = server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_context().new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + "/")
            expect(page.locator("#protocol option")).not_to_have_count(0)
            page.select_option("#protocol", "same-word")
            expect(page.locator("select[name=things]")).to_have_value("builtin")
            page.click("#create-room")
            page.wait_for_url("**/r/**")
            code = page.url.rstrip("/").rsplit("/", 1)[-1]
            page.fill("input[name=name]", "Ann")
            page.click("#join-button")

            def play(word: str, games: int) -> str:
                """Start the next game, name the thing, send; the history's newest line once it is over."""
                page.click("#start")
                expect(page.locator("#request-prompt")).to_contain_text("Name this in one word")
                expect(page.locator("#thing")).to_have_text(re.compile(r"^Name this: \S.*\S$"))  # the room's own part
                page.fill("#field-word", word)
                page.click("#submit-reply")
                expect(page.locator("#history li")).to_have_count(games, timeout=30_000)
                return page.locator("#history li").first.inner_text()

            first = play("Hammer", 1)
            assert first.startswith("Game 1 (t0): did not agree (Ann: hammer, agent-1: ")
            transcript = page.locator("#transcript").inner_text()
            assert 'Ann: names it "hammer"' in transcript
            said = re.search(r"agent-1: ([^,)]+)", transcript)
            assert said is not None, transcript
            second = play(said.group(1), 2)
            assert second == f"Game 2 (t1): agreed (Ann: {SCRIPTED_WORD}, agent-1: {SCRIPTED_WORD}, " \
                             f"agent-2: {SCRIPTED_WORD})"
            expect(page.locator("#winloss")).to_have_text("2 played, 0 failed, of 2 games")
            assert not errors, errors
        finally:
            browser.close()
    export = httpx.get(f"{base}/api/rooms/{code}/export.json").json()
    assert export["room"]["protocol"] == "same-word"
    assert [(g["number"], g["item"], g["status"]) for g in export["games"]] == [(2, "t1", "done"), (1, "t0", "done")]
    # The room's games are episodes of its run: lexicoord's report reads them, in a fresh process.
    report = lexicoord(installed, "report", export["room"]["run"], "--db", str(db), "--out", str(tmp_path / "r"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads((tmp_path / "r" / "same_word.json").read_text()) == {
        "games": 2, "agreed": 1, "by_seats": {"3": {"games": 2, "agreed": 1}}}
