"""The migrations build exactly the schema the code expects, and reopening is idempotent."""

import json
import sqlite3
import time

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from lexicoord.runs.store import SCHEMA_HEAD, LiveGame, LiveWrite, Store
from lexicoord.runs.tables import METADATA

HEAD = SCHEMA_HEAD


def test_the_store_knows_the_newest_migration() -> None:
    """The store skips Alembic when a database is at SCHEMA_HEAD: that must be the migrations' own head."""
    from pathlib import Path

    from alembic.config import Config
    from alembic.script import ScriptDirectory

    import lexicoord.runs.store as store_module

    config = Config()
    config.set_main_option("script_location", str(Path(store_module.__file__).parent / "migrations"))
    assert ScriptDirectory.from_config(config).get_heads() == [SCHEMA_HEAD]


def test_an_up_to_date_store_opens_without_alembic_and_an_old_one_is_still_migrated(tmp_path) -> None:
    import subprocess
    import sys

    path = tmp_path / "runs.db"
    probe = ("import sys; from lexicoord.runs.store import Store; Store(sys.argv[1]); "
             "print('alembic' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True)
    again = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "True", "a new file is migrated by Alembic"
    assert again.stdout.strip() == "False", "a file at the newest schema is opened without it"
    with sqlite3.connect(path) as conn:  # back to a store two releases old: before the index and the studies
        conn.execute("UPDATE alembic_version SET version_num = '0006_one_journal'")
        conn.execute("DROP INDEX ix_episodes_run_position_id")
        conn.execute("DROP TABLE study_participants")
        conn.execute("DROP TABLE studies")
        conn.execute("DROP TABLE gates")
        conn.execute("DROP INDEX ix_events_episode_type_seq")
        conn.execute("DROP TABLE rate_buckets")
        conn.execute("DROP TABLE responses")
    Store(str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(SCHEMA_HEAD,)]
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'ix_episodes_run_position_id'").fetchall()
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'study_participants'").fetchall()
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'ix_events_episode_type_seq'").fetchall()
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'rate_buckets'").fetchall()


def test_migrated_database_matches_the_models(store_url) -> None:
    """On a SQLite file and on a real PostgreSQL server."""
    store = Store(store_url)
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), METADATA)
    assert diff == [], f"tables.py and the migrations disagree: {diff}"


def test_reopening_applies_nothing_twice(store_url) -> None:
    Store(store_url).open_run("r", "toy", {}, 0)
    store = Store(store_url)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).fetchall() == [(HEAD,)]
        assert conn.execute(text("SELECT COUNT(*) FROM runs")).scalar_one() == 1


def _open(path: str) -> str:
    try:
        Store(path)
        return "ok"
    except Exception as exc:  # reported back to the test
        return repr(exc)


def test_processes_opening_a_new_file_at_once_all_succeed(tmp_path) -> None:
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=4) as pool:
        for n in range(8):
            path = str(tmp_path / f"race-{n}.db")
            results = list(pool.map(_open, [path] * 4))
            assert results == ["ok"] * 4, results


def test_a_database_from_before_rooms_is_upgraded_in_place(tmp_path) -> None:
    from pathlib import Path

    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    import lexicoord.runs.store as store_module

    path = tmp_path / "old.db"
    config = Config()
    config.set_main_option("script_location", str(Path(store_module.__file__).parent / "migrations"))
    with create_engine(f"sqlite:///{path}").begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001_initial")
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO runs VALUES ('old', 'toy', 'finished', 1.0, 1.0, '{}', 0)")
    store = Store(str(path))
    assert [r.id for r in store.runs()] == ["old"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (HEAD,)
        assert conn.execute("SELECT COUNT(*) FROM rooms").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM moves").fetchone()[0] == 0


def _alembic(url: str, action: str, revision: str) -> None:
    from pathlib import Path

    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    import lexicoord.runs.store as store_module

    config = Config()
    config.set_main_option("script_location", str(Path(store_module.__file__).parent / "migrations"))
    engine = create_engine(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        getattr(command, action)(config, revision)
    engine.dispose()


def test_both_journals_become_one_and_back(store_url) -> None:
    """A store at 0005 with entries in both journals: every entry lands in ``moves`` under its run and episode
    key (a room's under the key its game is stored under), the old tables go, and a downgrade puts them back."""
    import sqlalchemy as sa

    from lexicoord.core.spec import AgentSpec, EpisodeSpec, Place

    _alembic(store_url, "upgrade", "0005_debate_name")
    current = EpisodeSpec(item_id="game-3", item={"seed": 77}, lineup=[AgentSpec(name="Ann", kind="human")], repetition=3)
    older = EpisodeSpec(item_id="game-2", item={"seed": 78}, lineup=[AgentSpec(name="Ann", kind="human")], repetition=2)
    first_layout = EpisodeSpec(item_id="x", repetition=5)
    state = {"version": 1, "people": [], "leader": "Ann",
             "game": {"phase": "playing", "games": 3, "current": {"number": 3, "spec": current.model_dump(mode="json"),
                                                                   "seed": 9}}}
    old_state = {"people": [], "phase": "playing", "games": 5,
                 "current": {"number": 5, "spec": {"item_id": "x", "repetition": 5}, "seed": 1}}
    engine = sa.create_engine(store_url)
    md = sa.MetaData()
    t = {name: sa.Table(name, md, autoload_with=engine)
         for name in ("runs", "rooms", "room_moves", "episode_moves", "episodes")}
    with engine.begin() as conn:
        for run in ("camp", "room-a", "room-b"):
            conn.execute(t["runs"].insert().values(id=run, protocol="toy", status="open", created_at=1.0, updated_at=1.0,
                                              config={}, total_episodes=0))
        for room, run, saved in (("a", "room-a", state), ("b", "room-b", old_state), ("c", "room-gone", state)):
            conn.execute(t["rooms"].insert().values(id=room, code=f"code-{room}", run_id=run, status="open",
                                                    created_at=1.0, updated_at=1.0, config={}, state=saved))
        conn.execute(t["episodes"].insert().values(
            run_id="room-a", key=older.key, position=2, item_id="game-2", repetition=2, seed=0, spec={},
            status="failed", started_at=1.0, finished_at=2.0, attempt=1, model_calls=0, prompt_tokens=0,
            completion_tokens=0))
        room_rows = [("a", 3, "Ann", 0, {"kind": "vote", "answer": 1}), ("a", 3, "#control", 0, {"end": False}),
                     ("a", 2, "Ann", 0, {"kind": "vote", "answer": 2}), ("a", 1, "Ann", 0, {"answer": 3}),
                     ("b", 5, "Ann", 0, {"answer": 4}), ("c", 3, "Ann", 0, {"answer": 5})]
        conn.execute(t["room_moves"].insert(), [dict(zip(("room_id", "game", "player", "idx", "data"), r))
                                                for r in room_rows])
        conn.execute(t["episode_moves"].insert(), [{"run_id": "camp", "key": "k1", "player": "A", "idx": i,
                                                    "data": {"answer": i}} for i in range(2)])

    def j(data: object) -> str:
        return json.dumps(json.loads(data) if isinstance(data, str) else data, sort_keys=True)

    def rows(table: str, *cols: str) -> set[tuple]:
        """The table's rows, its JSON ``data`` as text (SQLite gives it as text, PostgreSQL as a dict)."""
        with engine.connect() as conn:
            return {tuple(j(v) if c == "data" else v for c, v in zip(cols, r))
                    for r in conn.execute(sa.text(f"SELECT {', '.join(cols)} FROM {table}"))}

    _alembic(store_url, "upgrade", "0008_studies")
    assert rows("alembic_version", "version_num") == {("0008_studies",)}
    assert rows("moves", "run_id", "key", "player", "idx", "data") == {
        ("room-a", current.key, "Ann", 0, j({"kind": "vote", "answer": 1})),
        ("room-a", current.key, "#control", 0, j({"end": False})),
        ("room-a", older.key, "Ann", 0, j({"kind": "vote", "answer": 2})),  # stored (failed) at position 2
        ("room-a", "room-game-1", "Ann", 0, j({"answer": 3})),  # a game nothing names: kept, never replayed
        ("room-b", first_layout.key, "Ann", 0, j({"answer": 4})),  # a state saved before states were versioned
        ("camp", "k1", "A", 0, j({"answer": 0})), ("camp", "k1", "A", 1, j({"answer": 1})),
    }, "every entry whose run exists, under its episode key"
    assert not {"room_moves", "episode_moves"} & set(sa.inspect(engine).get_table_names())
    Store(store_url)  # opening the store brings it to the head: the room's game in play is keyed with its place
    assert rows("alembic_version", "version_num") == {(HEAD,)}
    placed = current.model_copy(update={"place": Place(room="a", game=3)})
    assert Store(store_url).episode_moves("room-a", placed.key) == {"#control": [{"end": False}],
                                                                    "Ann": [{"kind": "vote", "answer": 1}]}
    assert Store(store_url).episode_moves("room-a", current.key) == {}
    # A game in progress the older code does not know goes with the downgrade (its journal replays it).
    Store(store_url).keep_live([LiveWrite(LiveGame.of("room-a", placed, 3), [], start=True)])
    assert rows("episodes", "status") == {("failed",), ("playing",)}
    _alembic(store_url, "downgrade", "0005_debate_name")
    assert "moves" not in sa.inspect(engine).get_table_names()
    assert rows("episodes", "status") == {("failed",)}
    assert rows("room_moves", "room_id", "game", "player", "idx", "data") == {
        (room, game, player, idx, j(data)) for room, game, player, idx, data in room_rows if room != "c"}
    assert rows("episode_moves", "run_id", "key", "player", "idx", "data") == {
        ("camp", "k1", "A", i, j({"answer": i})) for i in range(2)}
    engine.dispose()


def test_the_debate_keeps_one_name_in_stored_runs_and_rooms(store_url) -> None:
    """Runs and rooms stored under the debate's old name "ambiguity" read as "debate" after the upgrade (and the
    report, the viewer and the rooms find the protocol by that name); others are left alone; downgrade restores."""
    import sqlalchemy as sa

    _alembic(store_url, "upgrade", "0004_episode_claims")
    engine = sa.create_engine(store_url)
    md = sa.MetaData()
    runs, rooms = (sa.Table(name, md, autoload_with=engine) for name in ("runs", "rooms"))
    with engine.begin() as conn:
        for run, protocol in (("old-debate", "ambiguity"), ("coord", "coordination")):
            conn.execute(runs.insert().values(id=run, protocol=protocol, status="finished", created_at=1.0,
                                              updated_at=1.0, config={}, total_episodes=0))
        for room, protocol in (("r1", "ambiguity"), ("r2", "cogent")):
            conn.execute(rooms.insert().values(id=room, code=f"c-{room}", run_id="old-debate", status="open",
                                               created_at=1.0, updated_at=1.0, config={"protocol": protocol, "rounds": 2},
                                               state={}))
    _alembic(store_url, "upgrade", "0005_debate_name")

    def read() -> tuple[dict[str, str], dict[str, dict]]:
        with engine.connect() as conn:
            return (dict(conn.execute(sa.select(runs.c.id, runs.c.protocol)).all()),
                    dict(conn.execute(sa.select(rooms.c.id, rooms.c.config)).all()))

    protocols, configs = read()
    assert protocols == {"old-debate": "debate", "coord": "coordination"}
    assert configs == {"r1": {"protocol": "debate", "rounds": 2}, "r2": {"protocol": "cogent", "rounds": 2}}
    _alembic(store_url, "downgrade", "0004_episode_claims")
    protocols, configs = read()
    assert protocols["old-debate"] == "ambiguity" and configs["r1"]["protocol"] == "ambiguity"
    engine.dispose()


def test_stored_room_games_are_keyed_with_their_place_and_back(store_url) -> None:
    """0009: every stored game of a room (a study's group's, or a room's own run) gets its place and the key it
    gives, followed in the rooms' and the study's own lists; a campaign's episode keeps its key; the downgrade
    gives the old keys back, and refuses (changing nothing) where two groups' games would meet under one key."""
    import pytest
    import sqlalchemy as sa

    from lexicoord.core.spec import AgentSpec, EpisodeSpec, Place

    _alembic(store_url, "upgrade", "0008_studies")
    people = [AgentSpec(name="Person 1", kind="human")]
    one, two = (EpisodeSpec(item_id=i, item={"id": i}, lineup=people, repetition=1) for i in ("s1", "s2"))
    own = EpisodeSpec(item_id="s1", item={"id": "s1"}, lineup=[AgentSpec(name="Ann", kind="human")], repetition=1)
    camp = EpisodeSpec(item_id="s1", item={"id": "s1"}, repetition=0)
    engine = sa.create_engine(store_url)
    md = sa.MetaData()
    t = {n: sa.Table(n, md, autoload_with=engine) for n in ("runs", "rooms", "episodes", "studies")}
    episode = {"position": 1, "item_id": "s1", "repetition": 1, "seed": 0, "status": "done", "started_at": 1.0,
               "finished_at": 2.0, "attempt": 1, "model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    with engine.begin() as conn:
        for run in ("camp", "study-s", "room-u"):
            conn.execute(t["runs"].insert().values(id=run, protocol="toy", status="open", created_at=1.0,
                                                   updated_at=1.0, config={}, total_episodes=0))
        for run, spec in (("camp", camp), ("study-s", one), ("study-s", two), ("room-u", own)):
            conn.execute(t["episodes"].insert().values(run_id=run, key=spec.key, spec=spec.model_dump(mode="json"),
                                                       **episode))
        for room, code, run, games in (("r1", "C1", "study-s", [one.key]), ("r2", "C2", "study-s", [two.key]),
                                       ("u", "CU", "room-u", None)):
            state = {"version": 1, "people": [], "game": {"phase": "over", "games": 1}}
            if games is not None:
                state["managed"] = {"study": "s", "model": "m", "games": games}
            conn.execute(t["rooms"].insert().values(id=room, code=code, run_id=run, status="open", created_at=1.0,
                                                    updated_at=1.0, config={}, state=state))
        groups = {"g1": {"room": "C1", "games": [{"number": 1, "key": one.key}]},
                  "g2": {"room": "C2", "games": [{"number": 1, "key": two.key}]}}
        conn.execute(t["studies"].insert().values(id="s", created_at=1.0, updated_at=1.0, config={},
                                                  state={"groups": groups}))

    def placed(spec: EpisodeSpec, room: str, group: str | None) -> EpisodeSpec:
        return spec.model_copy(update={"place": Place(room=room, game=1, group=group)})

    def keys() -> set[tuple[str, str]]:
        with engine.connect() as conn:
            return {(r, k) for r, k in conn.execute(sa.select(t["episodes"].c.run_id, t["episodes"].c.key))}

    def state_of(table: str, key: str) -> dict:
        with engine.connect() as conn:
            value = conn.execute(sa.select(t[table].c.state).where(t[table].c.id == key)).scalar_one()
        return json.loads(value) if isinstance(value, str) else value

    before = keys()
    Store(store_url)
    p1, p2, pu = placed(one, "r1", "g1"), placed(two, "r2", "g2"), placed(own, "u", None)
    assert keys() == {("camp", camp.key), ("study-s", p1.key), ("study-s", p2.key), ("room-u", pu.key)}
    assert sorted((e.spec["place"]["room"], e.spec["place"]["group"], e.spec["place"]["game"])
                  for e in Store(store_url).episodes("study-s")) == [("r1", "g1", 1), ("r2", "g2", 1)]
    assert all(EpisodeSpec.model_validate(e.spec).key == e.key for e in Store(store_url).episodes("study-s"))
    assert state_of("rooms", "r1")["managed"]["games"] == [p1.key]
    assert [g["games"][0]["key"] for g in state_of("studies", "s")["groups"].values()] == [p1.key, p2.key]
    _alembic(store_url, "downgrade", "0008_studies")
    assert keys() == before
    assert state_of("rooms", "r2")["managed"]["games"] == [two.key]
    # Two groups that played the same item: two episodes now, one key without their places.
    _alembic(store_url, "upgrade", "head")
    twin = placed(one, "r2", "g2")
    with engine.begin() as conn:
        conn.execute(t["episodes"].insert().values(run_id="study-s", key=twin.key, spec=twin.model_dump(mode="json"),
                                                   **episode))
        conn.execute(t["rooms"].update().where(t["rooms"].c.id == "r2").values(state={
            "version": 1, "people": [], "game": {"phase": "over", "games": 2},
            "managed": {"study": "s", "model": "m", "games": [p2.key, twin.key]}}))
    at_head = keys()
    with pytest.raises(RuntimeError, match="cannot hold both"):
        _alembic(store_url, "downgrade", "0008_studies")
    assert keys() == at_head


def test_a_game_two_groups_rooms_both_list_keeps_its_key_and_each_room_learns_its_group(store_url) -> None:
    """The defect itself, as an older release stored it: two groups' rooms list one key (one of their two games
    was dropped). Which group's game the row is cannot be told, so it keeps its key and gets no place; the
    other games are placed, and every study room learns its group for the games it plays from now on."""
    import sqlalchemy as sa

    from lexicoord.core.spec import AgentSpec, EpisodeSpec, Place

    _alembic(store_url, "upgrade", "0008_studies")
    people = [AgentSpec(name="Person 1", kind="human")]
    shared, own = (EpisodeSpec(item_id=i, item={"id": i}, lineup=people, repetition=1) for i in ("s1", "s2"))
    engine = sa.create_engine(store_url)
    md = sa.MetaData()
    t = {n: sa.Table(n, md, autoload_with=engine) for n in ("runs", "rooms", "episodes", "studies")}
    with engine.begin() as conn:
        conn.execute(t["runs"].insert().values(id="study-s", protocol="toy", status="open", created_at=1.0,
                                               updated_at=1.0, config={}, total_episodes=0))
        for spec in (shared, own):
            conn.execute(t["episodes"].insert().values(
                run_id="study-s", key=spec.key, spec=spec.model_dump(mode="json"), position=1, item_id=spec.item_id,
                repetition=1, seed=0, status="done", started_at=1.0, finished_at=2.0, attempt=1, model_calls=0,
                prompt_tokens=0, completion_tokens=0))
        for room, code, key in (("r1", "C1", shared.key), ("r2", "C2", own.key), ("r3", "C3", shared.key)):
            conn.execute(t["rooms"].insert().values(
                id=room, code=code, run_id="study-s", status="open", created_at=1.0, updated_at=1.0, config={},
                state={"version": 1, "people": [], "game": {"phase": "over", "games": 1},
                       "managed": {"study": "s", "model": "m", "games": [key]}}))
        groups = {g: {"room": c, "games": [{"number": 1, "key": k}]}
                  for g, c, k in (("g1", "C1", shared.key), ("g2", "C2", own.key), ("g3", "C3", shared.key))}
        conn.execute(t["studies"].insert().values(id="s", created_at=1.0, updated_at=1.0, config={},
                                                  state={"groups": groups}))
    Store(store_url)
    placed = own.model_copy(update={"place": Place(room="r2", game=1, group="g2")})
    by_key = {e.key: e for e in Store(store_url).episodes("study-s")}
    assert set(by_key) == {shared.key, placed.key}
    assert by_key[shared.key].spec.get("place") is None and by_key[placed.key].spec["place"]["group"] == "g2"
    with engine.connect() as conn:
        states = {r: (json.loads(s) if isinstance(s, str) else s)
                  for r, s in conn.execute(sa.select(t["rooms"].c.id, t["rooms"].c.state))}
    assert {r: s["managed"]["group"] for r, s in states.items()} == {"r1": "g1", "r2": "g2", "r3": "g3"}
    assert [states[r]["managed"]["games"] for r in ("r1", "r2", "r3")] == [[shared.key], [placed.key], [shared.key]]


def test_a_clash_on_a_new_file_is_retried_until_the_wait_has_passed_not_a_fixed_count(tmp_path, monkeypatch) -> None:
    """On a busy machine the process that makes the tables can keep a new file busy for more than five short
    tries; the others keep trying until the store's wait has passed, then say so."""
    from alembic import command
    from sqlalchemy.exc import OperationalError

    from lexicoord.errors import LexicoordError
    from lexicoord.runs.store import Store

    real = command.upgrade
    calls = {"n": 0}

    def busy_then_free(config, revision):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] <= 12:
            raise OperationalError("CREATE TABLE runs", {}, Exception("table runs already exists"))
        return real(config, revision)

    monkeypatch.setattr(command, "upgrade", busy_then_free)
    monkeypatch.setenv("LEXICOORD_DB_WAIT", "30")
    Store(str(tmp_path / "busy.db"))
    assert calls["n"] == 13

    calls["n"] = -10**6  # busy for good: given up once the (short) wait has passed, with the store's own error
    monkeypatch.setenv("LEXICOORD_DB_WAIT", "0.5")
    started = time.monotonic()
    with pytest.raises(LexicoordError) as refused:
        Store(str(tmp_path / "never.db"))
    assert 0.5 <= time.monotonic() - started < 10 and "never.db" in str(refused.value)
