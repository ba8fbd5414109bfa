"""The store on a real SQLite file and, where the test takes ``store_url``, on a real PostgreSQL server too."""

import io
import json
import sqlite3
import time

import pytest

from lexicoord.core.events import ChoiceEvent, Event, OutcomeEvent
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import LexicoordError
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.types import ChatMessage, Usage
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import LiveGame, LiveWrite, Move, Store


def record(run_id: str, key: str, status: str = "done", **kw) -> EpisodeRecord:
    now = time.time()
    return EpisodeRecord(run_id=run_id, key=key, item_id=f"item-{key}", status=status, started_at=now, finished_at=now + 1, **kw)


def sample_events() -> list[Event]:
    events: list[Event] = [
        ModelCallEvent(model="scripted/x", agent="a1", messages=[ChatMessage(role="user", content="q")], text="raw", usage=Usage(prompt_tokens=3, completion_tokens=1)),
        ChoiceEvent(agent="a1", round=1, choice="river", justification="water nearby", options=["river", "money"]),
        Event(type="custom_thing", agent="a2", extra_field=[1, 2]),
        OutcomeEvent(outcome={"agreed": True}),
    ]
    for i, e in enumerate(events):
        e.seq = i
    return events


def test_round_trip_on_postgresql(postgres) -> None:
    url = postgres.database()
    store = Store(url)
    store.open_run("r1", "toy", {"k": 1}, total=2)
    episode_id = store.save_episode(record("r1", "e1", outcome={"agreed": True}), sample_events())
    store.close()
    reopened = Store(url)
    assert reopened.engine.dialect.name == "postgresql"
    [episode] = reopened.episodes("r1")
    assert episode.id == episode_id and episode.outcome == {"agreed": True}
    events = reopened.events(episode_id)
    assert [type(e).__name__ for e in events] == ["ModelCallEvent", "ChoiceEvent", "Event", "OutcomeEvent"]
    assert events[0].usage.prompt_tokens == 3 and events[2].model_extra == {"extra_field": [1, 2]}


def test_round_trip_on_a_sqlite_file(tmp_path) -> None:
    path = tmp_path / "runs.db"
    store = Store(str(path))
    store.open_run("r1", "toy", {"k": 1}, total=2)
    episode_id = store.save_episode(record("r1", "e1", outcome={"agreed": True}), sample_events())
    store.close()

    reopened = Store(f"sqlite:///{path}")
    run = reopened.run("r1")
    assert run.protocol == "toy" and run.config == {"k": 1} and run.done == 1 and run.total_episodes == 2
    [episode] = reopened.episodes("r1")
    assert episode.id == episode_id and episode.outcome == {"agreed": True} and episode.duration == pytest.approx(1)
    events = reopened.events(episode_id)
    assert [type(e).__name__ for e in events] == ["ModelCallEvent", "ChoiceEvent", "Event", "OutcomeEvent"]
    assert events[0].usage.prompt_tokens == 3 and events[0].messages[0].content == "q"
    assert events[1].choice == "river" and events[1].round == 1
    assert events[2].type == "custom_thing" and events[2].model_extra == {"extra_field": [1, 2]}

    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 4


def test_failed_attempt_is_replaced_by_the_retry(store_url) -> None:
    store = Store(store_url)
    store.open_run("r", "toy", {}, 1)
    store.save_episode(record("r", "e", status="failed", error="boom"), sample_events()[:1])
    assert store.finished_keys("r") == set() and store.finished_keys("r", include_failed=True) == {"e"}
    store.save_episode(record("r", "e"), sample_events())
    [episode] = store.episodes("r")
    assert episode.status == "done" and episode.attempt == 2 and episode.error is None
    assert len(store.events(episode.id)) == 4
    assert store.save_episode(record("r", "e"), sample_events()) == episode.id, "the same content again adds nothing"
    assert store.save_episode(record("r", "e", status="failed", error="late"), []) == episode.id, "a failed try after"
    assert store.run("r").conflicts == 0
    told = store.save_episode(record("r", "e"), sample_events()[:3])  # the same outcome, another transcript
    assert told != episode.id and store.run("r").conflicts == 1
    assert "record of what was said and done" in (store.episodes("r", conflicts=True)[1].error or "")
    late = store.save_episode(record("r", "e", outcome={"late": True}), sample_events()[:2])
    assert late != episode.id
    assert [(e.key, e.outcome) for e in store.episodes("r")] == [("e", None)], "a done episode is never overwritten"
    kept = {e.key: e for e in store.episodes("r", conflicts=True)}
    assert kept["e~3"].status == "conflict" and kept["e~3"].outcome == {"late": True} and kept["e~3"].id == late
    assert "another outcome" in (kept["e~3"].error or "") and len(store.events(late)) == 2
    assert store.run("r").conflicts == 2 and store.run("r").done == 1


def test_a_second_save_with_other_content_is_logged_and_kept_each_time(store_url, caplog) -> None:
    """Never a silent drop: every save that meets a finished episode with another outcome or spec is an error in
    the log and a row of its own; the run's export holds them all, a report's reading leaves them out."""
    import io
    import json
    import logging

    store = Store(store_url)
    store.open_run("r", "toy", {}, 1)
    first = store.save_episode(record("r", "e", outcome={"n": 1}), sample_events())
    store.add_episode_moves([Move("r", "e", "a1", 0, {"x": 1})])  # the second player's journal
    with caplog.at_level(logging.ERROR, logger="lexicoord.runs.store"):
        second = store.save_episode(record("r", "e", outcome={"n": 2}), sample_events())
        third = store.save_episode(record("r", "e", outcome={"n": 3}), sample_events())
    assert len({first, second, third}) == 3
    assert [r.getMessage() for r in caplog.records if "saved again" in r.getMessage()] and len(caplog.records) == 2
    assert [e.outcome for e, _ in store.iter_run_events("r")] == [{"n": 1}]
    assert store.episode_moves("r", "e") == {}, "the done episode's journal is settled with its second save"
    out = io.StringIO()
    store.export_jsonl("r", out)
    exported = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sorted((e["key"], e["outcome"]["n"]) for e in exported if e["record"] == "episode") == [
        ("e", 1), ("e~2", 2), ("e~3", 3)]
    from typer.testing import CliRunner

    from lexicoord.cli.app import app as cli

    shown = CliRunner().invoke(cli, ["runs", "show", "r", "--db", store_url], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "2 conflicting second save(s)" in shown.output, shown.output


def test_runs_are_found_by_unique_prefix(store_url) -> None:
    store = Store(store_url)
    store.open_run("campaign-a", "toy", {}, 0)
    store.open_run("campaign-b", "toy", {}, 0)
    assert store.run("campaign-a").id == "campaign-a"
    with pytest.raises(LexicoordError, match="several runs"):
        store.run("campaign")
    with pytest.raises(LexicoordError, match="No run 'zzz'"):
        store.run("zzz")
    with pytest.raises(LexicoordError, match="protocol 'toy'"):
        store.open_run("campaign-a", "other", {}, 0)


def test_resuming_with_other_settings_is_refused(store_url) -> None:
    from lexicoord.errors import ConfigError

    store = Store(store_url)
    store.open_run("r", "toy", {"seed": 1, "model": "a"}, 3)
    assert store.open_run("r", "toy", {"model": "a", "seed": 1}, 5).total_episodes == 5
    with pytest.raises(ConfigError, match="other settings: seed was 1 and is now 2; resume it with the same settings"):
        store.open_run("r", "toy", {"seed": 2, "model": "a"}, 3)
    # a table of settings: each key that differs, stored and new, not the whole table
    store.open_run("t", "toy", {"settings": {"qhat": 0.79, "rounds": 3, "judge": None}}, 3)
    with pytest.raises(ConfigError) as refused:
        store.open_run("t", "toy", {"settings": {"qhat": 0.83, "rounds": 3, "judge": "m"}}, 3)
    assert "settings.judge was None and is now 'm'; settings.qhat was 0.79 and is now 0.83;" in str(refused.value)
    assert "rounds" not in str(refused.value)


@pytest.mark.parametrize("grown, allowed", [
    ({"items": 5}, True),
    ({"items": 3}, True),
    ({"variants": ["single", "vanilla", "cogent"]}, True),
    ({"variants": ["cogent", "single"]}, True),                 # the same entries in another order
    ({"items": 2}, False),
    ({"variants": ["single"]}, False),
    ({"items": 5, "settings": {"rounds": 2}}, False),            # a grown count does not excuse a changed setting
])
def test_a_run_grows_by_its_growable_keys_and_never_shrinks(store_url, grown, allowed) -> None:
    from lexicoord.errors import ConfigError

    store = Store(store_url)
    first = {"items": 3, "variants": ["single", "cogent"], "settings": {"rounds": 3}}
    store.open_run("g", "toy", first, 6)
    again = {**first, **grown}
    if allowed:
        assert store.open_run("g", "toy", again, 10, grows=("items", "variants")).total_episodes == 10
        stored = store.run("g").config
        assert stored["items"] == again["items"] and stored["variants"] == again["variants"]
    else:
        with pytest.raises(ConfigError, match="grows but never shrinks|resume it with the same settings"):
            store.open_run("g", "toy", again, 10, grows=("items", "variants"))
        assert store.run("g").config == first, "a refused resume changes nothing"
    with pytest.raises(ConfigError, match="resume it with the same settings"):
        store.open_run("g", "toy", {**first, "items": 9}, 10), "without grows, any difference is refused"


def test_passwords_never_appear_in_messages() -> None:
    from lexicoord.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        Store("postgresql+psycopg://alice:s3cret@127.0.0.1:1/db")
    assert "s3cret" not in str(info.value) and "***" in str(info.value)


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path) -> None:
    from lexicoord.errors import ConfigError

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ConfigError, match="is damaged or is not a lexicoord store") as info:
        Store(str(junk))
    assert str(junk) in str(info.value) and "--db" in str(info.value)


def test_export_jsonl(store_url) -> None:
    store = Store(store_url)
    store.open_run("r", "toy", {}, 1)
    store.save_episode(record("r", "e"), sample_events())
    buf = io.StringIO()
    assert store.export_jsonl("r", buf) == 6
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert [line["record"] for line in lines] == ["run", "episode", "event", "event", "event", "event"]
    assert lines[3]["type"] == "choice" and lines[3]["choice"] == "river"
    assert lines[4]["extra_field"] == [1, 2]


def test_a_bare_postgresql_url_uses_the_installed_driver(postgres) -> None:
    bare = postgres.database().replace("postgresql+psycopg://", "postgresql://")
    store = Store(bare)
    assert store.engine.dialect.driver == "psycopg" and store.url.startswith("postgresql+psycopg://")
    store.open_run("r", "toy", {}, 0)
    assert store.run("r").status == "running"


def test_a_missing_postgresql_driver_names_the_extra() -> None:
    from lexicoord.errors import ConfigError

    with pytest.raises(ConfigError, match=r"No module named 'pg8000'.*lexicoord\[postgres\]"):
        Store("postgresql+pg8000://u:p@127.0.0.1:1/db")


def test_bad_url_is_a_clear_error() -> None:
    from lexicoord.errors import ConfigError

    with pytest.raises(ConfigError, match="Cannot open the store"):
        Store("nosuchdialect://x/y")


def test_a_resume_may_change_how_a_run_executes_but_not_what_it_plays(store_url) -> None:
    from lexicoord.errors import ConfigError
    from lexicoord.runs.store import Store as _Store

    store = _Store(store_url)
    store.open_run("r", "coordination", {"items": 3}, 3, runtime={"concurrency": 4})
    store.open_run("r", "coordination", {"items": 3}, 3, runtime={"concurrency": 1})
    store.open_run("r", "coordination", {"items": 3}, 3, runtime={"concurrency": 4})
    assert store.run("r").config == {"items": 3, "runtime": {"concurrency": [4, 1]}}
    with pytest.raises(ConfigError, match="items was 3 and is now 5"):
        store.open_run("r", "coordination", {"items": 5}, 5, runtime={"concurrency": 4})


def _open_at(url: str, worker: int, start: float) -> str:
    """One process opening run ``r`` at ``start`` (all of them at the same moment), with its own runtime value."""
    store = Store(url)
    time.sleep(max(0.0, start - time.time()))
    try:
        store.open_run("r", "toy", {"items": 2}, 2, runtime={"worker": worker})
        return "ok"
    except Exception as exc:  # reported back to the test
        return repr(exc)


def test_processes_starting_one_new_run_at_once_make_one_run_that_keeps_each_ones_runtime(store_url) -> None:
    """Array tasks of one run start together: one of them creates the run, the others reopen it, and none is lost."""
    from concurrent.futures import ProcessPoolExecutor

    Store(store_url)  # migrated first: racing on a new file's tables is test_migrations' concern
    with ProcessPoolExecutor(max_workers=4) as pool:
        start = time.time() + 1.5
        results = list(pool.map(_open_at, [store_url] * 4, range(4), [start] * 4))
    assert results == ["ok"] * 4, results
    [run] = Store(store_url).runs()
    assert run.id == "r" and run.status == "running" and run.total_episodes == 2
    assert run.config["items"] == 2 and sorted(run.config["runtime"]["worker"]) == [0, 1, 2, 3]


def test_a_read_only_handle_reads_and_refuses_every_write(store_url) -> None:
    """What the run viewer reads through, on SQLite and on PostgreSQL."""
    store = Store(store_url)
    store.open_run("r", "toy", {}, 1)
    store.save_episode(record("r", "e"), sample_events())
    reader = store.read_only()
    assert reader.run("r").done == 1 and [r.id for r in reader.run_page(10)] == ["r"]
    with pytest.raises(Exception, match="readonly|read-only|query_only"):
        reader.set_run_status("r", "failed")
    with pytest.raises(Exception, match="readonly|read-only|query_only"):
        reader.save_episode(record("r", "e2"), [])
    assert store.run("r").status == "running" and store.run("r").done == 1


def test_one_batch_saves_new_retried_already_done_and_live_episodes_each_as_alone(store_url: str) -> None:
    """A save of several episodes at once ends each as a save of it alone would: a new one is attempt 1, a
    failed one is replaced by attempt 2 without its old events, one done meanwhile stands (another outcome is
    kept beside it as a conflict), a live game's row becomes the ended episode in place; and the ids come back
    in the batch's order."""
    store = Store(store_url)
    store.open_run("r", "toy", {}, total=4)
    live = EpisodeSpec(item_id="g", item={}, lineup=[AgentSpec(name="Ann", kind="human")])
    store.save_episode(record("r", "failed", status="failed", error="boom"), sample_events()[:2])
    done_id = store.save_episode(record("r", "done", outcome={"first": True}), sample_events()[:1])
    store.keep_live([LiveWrite(LiveGame.of("r", live, 3), [sample_events()[1]], start=True)])
    [playing] = store.episode_page("r", limit=10, status="playing")
    store.add_episode_moves([Move("r", "failed", "a1", 0, {"error": "timeout"}), Move("r", "failed", "a1", 1, {"x": 1}),
                             Move("r", "new", "a1", 0, {"x": 2})])

    batch = [(record("r", live.key, outcome={"live": True}), sample_events()),
             (record("r", "new", outcome={"new": True}), sample_events()[:3]),
             (record("r", "done", outcome={"second": True}), sample_events()),
             (record("r", "failed", status="failed", error="again"), sample_events()[:1])]
    ids = store.save_episodes(batch)

    by_key = {e.key: e for e in store.episode_page("r", limit=10)}
    assert ids == [by_key[live.key].id, by_key["new"].id, by_key["done~2"].id, by_key["failed"].id]
    assert by_key["done"].id == done_id and by_key["done~2"].status == "conflict"
    assert by_key["done~2"].outcome == {"second": True}
    assert by_key[live.key].id == playing.id and by_key[live.key].status == "done"
    assert by_key[live.key].outcome == {"live": True} and by_key[live.key].attempt == 1
    assert by_key["new"].attempt == 1 and by_key["new"].outcome == {"new": True}
    assert by_key["done"].outcome == {"first": True}, "the first result stands"
    assert by_key["failed"].attempt == 2 and by_key["failed"].error == "again"
    assert [len(store.events(i)) for i in ids] == [4, 3, 4, 1]
    assert store.episode_moves("r", "new") == {}, "a done episode's journal is cleared"
    assert store.episode_moves("r", "failed") == {"a1": [{"x": 1}]}, "a failed one keeps what was answered"


def test_the_same_episode_twice_in_one_batch_is_saved_in_order(store_url: str) -> None:
    store = Store(store_url)
    store.open_run("r", "toy", {}, total=1)
    first, second = store.save_episodes([(record("r", "k", status="failed", error="boom"), sample_events()[:1]),
                                         (record("r", "k", outcome={"ok": True}), sample_events())])
    [episode] = store.episodes("r")
    assert episode.id == second and episode.attempt == 2 and episode.outcome == {"ok": True}
    assert len(store.events(second)) == 4


def test_a_run_read_as_a_stream_gives_every_episode_once_in_grid_order_with_its_events(store_url: str) -> None:
    """Read a few episodes a page: the pages join up (no episode lost or repeated across a page's edge, two
    episodes at one position included), each keeps its own events in order, and a live game is not a result."""
    store = Store(store_url)
    store.open_run("r", "toy", {}, total=12)
    positions = [5, 0, 3, 3, 9, 1, 7, 2, 8, 4, 6]  # saved out of order; two share a position
    for n, position in enumerate(positions):
        events = sample_events()[: 1 + n % 4]
        store.save_episode(record("r", f"k{n}", position=position,
                                  **({"status": "failed", "error": "x"} if n % 5 == 0 else {})), events)
    store.keep_live([LiveWrite(LiveGame.of("r", EpisodeSpec(item_id="g", item={}, lineup=[]), 0),
                               sample_events()[:1], start=True)])
    read = list(store.iter_run_events("r", page=3))
    assert [r.key for r, _ in read] == [e.key for e in sorted(store.episodes("r"), key=lambda e: (e.position, e.id))]
    assert len(read) == len(positions) and len({r.key for r, _ in read}) == len(positions)
    for episode, events in read:
        n = int(episode.key[1:])
        assert [e.model_dump(mode="json", exclude={"ts"}) for e in events] == [
            e.model_dump(mode="json", exclude={"ts"}) for e in sample_events()[: 1 + n % 4]]
    choices = list(store.iter_run_events("r", page=4, types=["choice"]))
    assert [r.key for r, _ in choices] == [r.key for r, _ in read]
    assert all(all(e.type == "choice" for e in events) for _, events in choices)
    assert sum(len(events) for _, events in choices) == sum(1 + n % 4 >= 2 for n in range(len(positions)))
    # One study room's own games, asked of the store by key (across pages, in grid order); none: nothing.
    own = ["k9", "k1", "k3", "k4", "live-key-no-such"]
    mine = list(store.iter_run_events("r", page=2, keys=own))
    assert [r.key for r, _ in mine] == [r.key for r, _ in read if r.key in own]
    assert [len(events) for _, events in mine] == [1 + int(r.key[1:]) % 4 for r, _ in mine]
    assert [e.key for e in store.episodes("r", keys=own)] == [e.key for e in store.episodes("r") if e.key in own]
    assert list(store.iter_run_events("r", keys=[])) == [] and store.episodes("r", keys=[]) == []


def test_two_processes_saving_one_episode_with_other_outcomes_keep_both(store_url: str) -> None:
    """Two processes on one run (each its own store handle, its own connections) play the same episode, as when a
    claim expired under a slow process: both results are kept, the first as the episode, the second as a
    conflict, whichever order they land in."""
    first_process, second_process = Store(store_url), Store(store_url)
    first_process.open_run("shared", "toy", {}, 1)
    a = first_process.save_episode(record("shared", "e", outcome={"winner": "a"}), sample_events())
    b = second_process.save_episode(record("shared", "e", outcome={"winner": "b"}), sample_events())
    kept = {e.key: e for e in Store(store_url).episodes("shared", conflicts=True)}
    assert set(kept) == {"e", "e~2"} and (kept["e"].id, kept["e~2"].id) == (a, b)
    assert kept["e"].outcome == {"winner": "a"} and kept["e~2"].outcome == {"winner": "b"}
    assert [e.outcome for e in second_process.episodes("shared")] == [{"winner": "a"}]
