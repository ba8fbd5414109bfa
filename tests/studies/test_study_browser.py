"""The issue's scenario for real: ``lexicoord study serve`` with the embedded model in every model seat, six
participants and the experimenter each in their own headless Chromium context (Debian's), and a server
restart in the middle of a game.

Six people join a study of groups of three people and one agent. One declines consent, one fails the quiz;
three pass and form a full group at once; the sixth waits alone until the lobby's timeout fills the group
with stand-ins. In the full group one person closes the browser mid-game and, after the grace period, a model
takes the seat. The server is then stopped and started again while the game waits for a person's move: the
pages reconnect by themselves and the game ends with no move asked twice or lost. The others finish the
survey (one writes HTML and a formula), the dashboard shows it all as text, and the exports carry the right
codes. Screenshots of every stage go to ``test-artifacts/browser/study-*.png``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.conftest import free_port
from tests.web.test_browser import ARTIFACTS, MODEL, browser, playwright  # noqa: F401  (the browser fixture)

pytestmark = pytest.mark.embedded

NAME = "browser-pilot"
KEY = "dashboard-key-for-the-browser-test"
CODES = {"completed": "C0MPLETED", "no_consent": "N0CONSENT", "failed_quiz": "FA1LQUIZ", "no_group": "N0GROUP",
         "dropped": "DR0PPED"}
REDIRECT = "https://app.prolific.com/submissions/complete?cc="
LOBBY_TIMEOUT = 7
# Above the floor of 5 s: after a restart every person counts as away until their room page reconnects, and
# the room page retries with a backoff of up to 5 s (src/lexicoord/web/static/room.js), so a grace of 5 s
# could take over people whose pages are open but not yet back.
GRACE = 10
CODES_TOML = "\n".join(f'{outcome} = "{code}"' for outcome, code in CODES.items())
HOSTILE = "=1+1 <img src=x onerror=alert(1)> <script>alert(2)</script>"

STUDY = f"""
name = "{NAME}"
protocol = "coordination"
title = "A word game"

[game]
seat_timeout = 120
clarification_bound = 0

[group]
people = 3
games = 1
agents = [{{ name = "Ava", model = "{MODEL}" }}]
model = "{MODEL}"

[consent]
text = "You will play a short word game with other people and a computer player. Do you agree to take part?"

[instructions]
text = "Each round, choose the meaning of the marked word that you think **everyone** will choose."

[quiz]
attempts = 1
[[quiz.questions]]
id = "goal"
text = "When does a game end well?"
options = ["When all choose the same meaning", "Never"]
answer = "When all choose the same meaning"

[lobby]
timeout = {LOBBY_TIMEOUT}
fill_with_agents = true

[dropout]
grace = {GRACE}
idle = false

[survey]
[[survey.questions]]
id = "clear"
kind = "likert"
text = "The game was clear."
scale = 5
[[survey.questions]]
id = "colour"
kind = "choice"
text = "To show you read this, choose Blue."
options = ["Red", "Blue", "Green"]
expect = "Blue"
[[survey.questions]]
id = "comments"
kind = "text"
text = "Anything else?"
required = false
max_length = 500

[completion]
redirect = "{REDIRECT}{{code}}"
[completion.codes]
{CODES_TOML}

[bonus]
per_game = 0.25
completed = 0.5
"""


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"study-{name}.png"), full_page=True)


def texts(locator: Any) -> list[str]:
    """The text of what ``locator`` finds now (nothing if it finds nothing, or its frame has gone: a game's frame
    leaves the page when the game ends; never waits)."""
    try:
        return [str(t) for t in locator.all_inner_texts()]
    except PlaywrightError:
        return []


def _die_with_parent() -> None:
    """The server is killed with the test process, even one cut short (a timeout, Ctrl-C): never left running."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Server:
    """``lexicoord study serve`` as an experimenter starts it, on loopback, with a private store; started again
    on the same port and store after a stop."""

    def __init__(self, home: Path, study: Path) -> None:
        self.home, self.study = home, study
        self.db = home / "study.db"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = home / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start the server; the seconds until it answered."""
        began = time.monotonic()
        exe = Path(sys.executable).with_name("lexicoord")
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                [str(exe), "study", "serve", str(self.study), "--port", str(self.port), "--db", str(self.db)],
                stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
                env={**os.environ, "LEXICOORD_HOME": str(self.home), "LEXICOORD_ADMIN_KEY": KEY})
        while time.monotonic() - began < 60:
            if self.proc.poll() is not None:
                pytest.fail(f"lexicoord study serve exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.base}/api/studies/{NAME}/pages", timeout=1).status_code == 200:
                    return time.monotonic() - began
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        pytest.fail("lexicoord study serve did not answer within 60 s")

    def stop(self, patience: float) -> tuple[float, bool]:
        """SIGTERM, then SIGKILL if the server has not exited after ``patience`` seconds (as a service manager
        stops a server); the seconds it took, and whether it had to be killed."""
        assert self.proc is not None
        began = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(patience)
            killed = False
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(15)
            killed = True
        return time.monotonic() - began, killed

    def admin(self, path: str) -> httpx.Response:
        """The dashboard's API, with the study's key."""
        r = httpx.get(f"{self.base}/api/studies/{NAME}/admin/{path}", headers={"X-Admin-Key": KEY}, timeout=30)
        assert r.status_code == 200, r.text
        return r


@pytest.fixture
def study_server(tmp_path: Path) -> Iterator[Server]:
    yield from serving(tmp_path, STUDY)


def serving(tmp_path: Path, study: str) -> Iterator[Server]:
    """A server for the study file ``study`` (its TOML), in a home of its own; stopped after the test."""
    home = tmp_path / "serve"
    home.mkdir()
    (home / "study.toml").write_text(study, encoding="utf-8")
    server = Server(home, home / "study.toml")
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.stop(patience=2)


class Console:
    """Every page's console errors, uncaught errors and dialogs; while the server restarts, its expected noise
    (the pages' requests and WebSockets refused) is told apart."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.noise: list[str] = []
        self.dialogs: list[str] = []
        self.expected: re.Pattern[str] | None = None

    def watch(self, page: Any, who: str) -> None:
        page.on("console", lambda msg: msg.type == "error" and self._error(who, msg.text))
        page.on("pageerror", lambda exc: self.errors.append(f"{who}: uncaught {exc}"))

        def dialog(d: Any) -> None:
            self.dialogs.append(f"{who}: {d.type} {d.message}")
            d.dismiss()

        page.on("dialog", dialog)

    def _error(self, who: str, text: str) -> None:
        if self.expected is not None and self.expected.fullmatch(text):
            self.noise.append(f"{who}: {text}")
        else:
            self.errors.append(f"{who}: {text}")


class Participant:
    """One participant in their own browser (context), who opens the study from a Prolific link."""

    def __init__(self, chromium: Any, server: Server, console: Console, pid: str) -> None:
        self.server, self.pid = server, pid
        self.context = chromium.new_context()
        self.page = self.context.new_page()
        console.watch(self.page, pid)
        #: The title of every request this person answered in the game, in order.
        self.moves: list[str] = []
        #: Answer every request as it comes (else the test says when).
        self.auto = False
        self.closed = False

    @property
    def link(self) -> str:
        return f"{self.server.base}/studies/{NAME}/?PROLIFIC_PID={self.pid}&STUDY_ID=s1&SESSION_ID=sess-{self.pid}"

    def open(self) -> None:
        self.page.goto(self.link)
        playwright.expect(self.page.locator("#stage")).to_have_attribute("data-stage", "consent")

    def to_quiz(self) -> None:
        self.open()
        self.page.click("#agree")
        self.page.click("#continue")
        playwright.expect(self.page.locator("#quiz")).to_be_visible()

    def quiz(self, answer: str) -> None:
        self.page.locator("#quiz label", has_text=answer).locator("input").check()
        self.page.click("#submit-quiz")

    def done(self, outcome: str) -> None:
        """The completion page: ``outcome``'s code, its message, and the link back to Prolific with the code."""
        playwright.expect(self.page.locator("#code")).to_have_text(CODES[outcome], timeout=30_000)
        playwright.expect(self.page.locator("#done-message")).not_to_be_empty()
        playwright.expect(self.page.locator("#redirect")).to_have_attribute("href", REDIRECT + CODES[outcome])

    @property
    def game(self) -> Any:
        """The room page in the study page's frame (the coordination game's own page)."""
        return self.page.frame_locator("#game-frame")

    def connected(self) -> bool:
        """The room page in the frame has its WebSocket open (False while the page has no game)."""
        return any(t.startswith("connected as") for t in texts(self.game.locator("#conn")))

    def back(self) -> bool:
        """After the server was away: the study page's poll answered again, and the room page is connected (or
        gone: a game that ended meanwhile is followed by the survey)."""
        in_game = self.page.locator("#stage").get_attribute("data-stage") == "game"
        return not "".join(texts(self.page.locator("#error"))) and (self.connected() or not in_game)

    def asked(self) -> bool:
        """The connected game asks this person to announce or choose (a page cut off shows a stale request)."""
        try:
            return not self.closed and self.connected() and self.game.locator("#submit-choice").is_visible()
        except PlaywrightError:  # the game ended as it was looked at: its frame left the page
            return False

    def request(self) -> str:
        return "".join(texts(self.game.locator(".request h3")))

    def move(self) -> None:
        """Choose the first meaning, with a reason, and submit; wait until the game has taken it."""
        game, title = self.game, self.request()
        if not self.moves:
            shot(self.page, f"4-game-{self.pid}-asked")
        game.locator(".option-label").first.click()
        game.locator("#justification").fill(f"{self.pid} thinks this meaning is the usual one")
        game.locator("#submit-choice").click()
        self.moves.append(title)
        until(lambda: not self.asked() or self.request() != title, 20, f"{self.pid}'s move '{title}' was not taken")

    def survey(self, likert: int, colour: str, comments: str) -> None:
        page = self.page
        page.locator(f"[data-question=clear] input[value='{likert}']").check()
        page.locator("[data-question=colour] label", has_text=colour).locator("input").check()
        page.fill("[data-question=comments] textarea", comments)
        shot(page, f"8-survey-{self.pid}")
        page.click("#submit-survey")


def until(ok: Callable[[], bool], limit: float, what: str, pump: Callable[[], None] | None = None) -> float:
    """Wait until ``ok()``, moving every automatic player meanwhile; the seconds it took."""
    began = time.monotonic()
    while not ok():
        if time.monotonic() - began > limit:
            pytest.fail(f"{what} (after {limit:.0f} s)")
        if pump is not None:
            pump()
        time.sleep(0.2)
    return time.monotonic() - began


def table(locator: Any) -> list[list[str]]:
    """The rows of the tables ``locator`` finds, each a list of its cells' text."""
    rows = locator.locator("tr").evaluate_all("rs => rs.map(r => [...r.children].map(c => c.textContent.trim()))")
    return [list(r) for r in rows]


def test_six_participants_from_link_to_code_with_a_dropout_and_a_restart(study_server: Server, browser) -> None:  # noqa: F811
    server, console = study_server, Console()
    began = time.monotonic()
    timings = {"server start": server.start()}

    # The experimenter's dashboard, open from the start in its own browser.
    board = browser.new_context().new_page()
    console.watch(board, "dashboard")
    board.goto(f"{server.base}/studies/{NAME}/admin#key={KEY}")
    playwright.expect(board.locator("#conn")).to_have_text("live")
    assert "key" not in board.url  # the key leaves the address bar

    p1, p2, p3, p4, p5, p6 = (Participant(browser, server, console, f"p{i}") for i in range(1, 7))

    # 1. P1 declines consent: the no-consent code.
    p1.open()
    shot(p1.page, "1-consent")
    p1.page.click("#decline")
    p1.done("no_consent")
    shot(p1.page, "1-declined")

    # 2. P2 fails the quiz's one attempt: the failed-quiz code.
    p2.to_quiz()
    p2.quiz("Never")
    p2.done("failed_quiz")
    shot(p2.page, "2-failed-quiz")

    # 3. P3, P4, P5 pass and wait in the lobby until the third makes a group of three (with the agent); each
    # sees the game in the study page's frame.
    for n, p in enumerate((p3, p4, p5), start=1):
        p.to_quiz()
        p.quiz("When all choose the same meaning")
        if n < 3:
            playwright.expect(p.page.locator("#lobby-status")).to_contain_text(f"number {n} of {n} waiting")
    shot(p4.page, "3-lobby")
    for p in (p3, p4, p5):
        playwright.expect(p.game.locator("#game-box .sentence mark")).to_be_visible(timeout=30_000)
    timings["group formed"] = time.monotonic() - began

    # 4. P6 passes after them and waits alone; at the lobby's timeout stand-ins fill its group, and it plays.
    p6.to_quiz()
    p6.quiz("When all choose the same meaning")
    playwright.expect(p6.page.locator("#lobby-status")).to_contain_text("number 1 of 1 waiting")
    shot(p6.page, "3-lobby-alone")

    players = (p3, p4, p5, p6)

    def pump() -> None:
        for p in players:
            if p.auto and p.asked():
                p.move()

    # The full group's game: P3 (Person 1, who leads) announces, and chooses in round 1; P4 holds round 1 open.
    p3.auto = p6.auto = True
    until(lambda: len(p3.moves) == 2 and p4.asked() and p5.asked(), 120, "round 1 was not asked of the group",
          pump)
    assert p3.moves == ["Announce your meaning of the word", "Round 1: your choice"]
    shot(p5.page, "5-game-p5-before-leaving")

    # 5. P5 closes the browser mid-game: after the grace period a model takes the seat, and P5's session ends
    # with the dropped code.
    p5.context.close()
    p5.closed = True

    def seat(pid: str) -> dict[str, Any]:
        state = server.admin("state").json()
        return next(s for g in state["groups"] for s in g["seats"] if s.get("participant") == pid)

    waited = until(lambda: seat("p5")["taken_over"], GRACE + 30, "no model took P5's seat", pump)
    assert waited >= GRACE - 1, f"P5's seat was taken over {waited:.1f} s after leaving, within the grace period"
    timings["takeover after leaving"] = waited
    assert seat("p5")["outcome"] == "dropped"
    playwright.expect(board.locator("#dropouts")).to_contain_text("p5")
    shot(board, "6-dashboard-takeover")
    assert not p4.moves and p4.asked(), "P4 holds the game open until after the restart"

    # 6. The server stops and starts again (same port, same store) while the group's game waits for P4. It
    # must stop by itself on SIGTERM (the study answers its long polls at once and counts no one's absence
    # while it stops); a service manager would kill it after 3 s.
    console.expected = re.compile(
        r"Failed to load resource: net::ERR_(CONNECTION_REFUSED|EMPTY_RESPONSE|CONNECTION_RESET)"
        rf"|WebSocket connection to 'ws://127\.0\.0\.1:{server.port}/ws/[A-Z0-9]+-[A-Z0-9]+' failed: "
        r"Error in connection establishment: net::ERR_CONNECTION_REFUSED")
    stopped = time.monotonic()
    timings["stop"], killed = server.stop(patience=3)
    assert not killed, "the server must stop by itself on SIGTERM, its long polls answered at once"
    timings["start again"] = server.start()
    # The pages come back by themselves: each room page's WebSocket, each study page's poll, the dashboard.
    live = [p for p in (p3, p4, p6) if p.page.locator("#game-frame").count()]
    until(lambda: all(p.back() for p in live) and texts(board.locator("#conn")) == ["live"], 30,
          "the pages did not come back by themselves", pump)
    timings["back after the stop"] = time.monotonic() - stopped
    for page in (board, *(p.page for p in live)):
        page.evaluate("1")  # what the pages logged while the server was away has reached this test by now
    console.expected = None  # from here on, any console error fails the test
    shot(p4.page, "7-after-restart-p4")

    # The game goes on where it stopped: P4 is asked its round-1 choice (never given), P3 is asked nothing
    # again (it had moved), and the game ends.
    p4.auto = True
    until(lambda: p4.moves == ["Round 1: your choice"], 60, "P4 was not asked its round-1 choice after the restart",
          pump)
    for p in (p3, p4, p6):
        until(lambda p=p: p.page.locator("#survey").is_visible(), 240, f"{p.pid} never reached the survey", pump)
    timings["games over"] = time.monotonic() - began
    assert p3.moves == ["Announce your meaning of the word", "Round 1: your choice"]
    assert p6.moves == ["Announce your meaning of the word", "Round 1: your choice"]

    # 7. The three finish the survey; P3 writes HTML and a formula; P6 misses the attention check (recorded,
    # never a reason to end the session).
    p3.survey(4, "Blue", HOSTILE)
    p4.survey(5, "Blue", "Fun game.")
    p6.survey(2, "Red", "")
    for p in (p3, p4, p6):
        p.done("completed")
    shot(p3.page, "9-done-p3")

    # 8. The dashboard: counts by stage and outcome, the groups with their people, agent and stand-ins, the
    # dropout, and what participants wrote as text.
    for key, n in (("participants", 6), ("done", 6), ("code: completed", 3), ("code: no_consent", 1),
                   ("code: failed_quiz", 1), ("code: dropped", 1)):
        playwright.expect(board.locator(f"[data-count='{key}'] strong")).to_have_text(str(n))
    playwright.expect(board.locator("#participants")).to_contain_text(HOSTILE)  # literal text, never markup
    g1, g2 = table(board.locator("[data-group=g1]")), table(board.locator("[data-group=g2]"))
    assert ["Person 1", "p3", "", "done", "completed", "no", ""] in g1
    assert ["Person 2", "p4", "", "done", "completed", "no", ""] in g1
    assert ["Person 3", "p5", "", "done", "dropped", "no", "yes"] in g1
    assert ["Ava", "agent", MODEL, "", "", "", ""] in g1 and len(g1) == 5
    assert ["Person 1", "p6", "", "done", "completed", "no", ""] in g2
    assert ["Ava", "agent", MODEL, "", "", "", ""] in g2
    assert ["Stand-in 1", "stand-in", MODEL, "", "", "", ""] in g2
    assert ["Stand-in 2", "stand-in", MODEL, "", "", "", ""] in g2 and len(g2) == 5
    assert ["p5", "g1", "Person 3", "disconnected", "1"] == table(board.locator("#dropouts"))[1][:5]
    assert board.locator("img").count() == 0 and board.locator("#participants script").count() == 0
    shot(board, "10-dashboard-final")

    # 9. The exports: one row and one code per participant, the code of its outcome; a formula kept as text.
    rows = list(csv.DictReader(io.StringIO(server.admin("participants.csv").text)))
    by = {r["participant_id"]: r for r in rows}
    outcomes = {"p1": "no_consent", "p2": "failed_quiz", "p3": "completed", "p4": "completed", "p5": "dropped",
                "p6": "completed"}
    assert len(rows) == 6 and {pid: (r["outcome"], r["code"]) for pid, r in by.items()} == {
        pid: (o, CODES[o]) for pid, o in outcomes.items()}
    assert all((r["study_id"], r["session_id"]) == ("s1", f"sess-{pid}") for pid, r in by.items())
    assert by["p3"]["survey_comments"] == "'" + HOSTILE
    assert by["p5"]["dropped_reason"] == "disconnected" and by["p5"]["games_played"] == "0"
    assert (by["p4"]["attention_colour"], by["p6"]["attention_colour"]) == ("True", "False")
    assert float(by["p6"]["seconds_lobby"]) >= LOBBY_TIMEOUT > float(by["p3"]["seconds_lobby"])

    # The stored games: the full group's has every move once (the ones made before the restart too) and
    # P5's seat taken over once; the embedded model really generated every model seat's move.
    from lexicoord.runs.store import Store

    store = Store(str(server.db))
    episodes = store.episodes(f"study-{NAME}")
    assert len(episodes) == 2 and all(e.status == "done" for e in episodes)
    full = next(e for e in episodes if any(a["options"].get("participant") == "p3" for a in e.spec["lineup"]))
    filled = next(e for e in episodes if e is not full)
    events = store.events(full.id or 0)
    choices = sorted((str(e.agent), e.round or 0) for e in events if e.type == "choice")
    assert choices == [("Ava", 1), ("Person 1", 0), ("Person 1", 1), ("Person 2", 1), ("Person 3", 1)], choices
    taken = [e for e in events if e.type == "seat_taken_over"]
    assert [(e.agent, e.by, e.reason) for e in taken] == [("Person 3", MODEL, "disconnected")]  # type: ignore[attr-defined]
    for episode, seats in ((full, {"Person 3", "Ava"}), (filled, {"Ava", "Stand-in 1", "Stand-in 2"})):
        calls = [e for e in store.events(episode.id or 0) if e.type == "model_call"]
        made = {c.agent for c in calls if c.model == MODEL and not c.cached and c.text and not c.error}  # type: ignore[attr-defined]
        assert made == seats, [c.model_dump(include={"agent", "text", "error"}) for c in calls]

    # bonus.csv: Prolific's lines, no header: the completion bonus, and the per-game bonus for a converged game.
    def owed(episode: Any) -> str:
        return f"{0.5 + 0.25 * bool((episode.outcome or {}).get('converged')):.2f}"

    bonus = server.admin("bonus.csv").text.splitlines()
    assert sorted(bonus) == [f"p3,{owed(full)}", f"p4,{owed(full)}", f"p6,{owed(filled)}"], bonus

    assert console.dialogs == [], console.dialogs
    assert console.errors == [], console.errors
    timings["total"] = time.monotonic() - began
    for page in (board, p1.page, p2.page, p3.page, p4.page, p6.page):
        page.context.close()
    print(f"\n{'killed after SIGTERM' if killed else 'exited on SIGTERM'}; {len(console.noise)} expected errors "
          "while away; " + "; ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
