"""The migrations build exactly the schema the code expects, and reopening is idempotent."""

import sqlite3

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from lexicoord.runs.schema import Base
from lexicoord.runs.store import Store

HEAD = "0004_episode_claims"


def test_migrated_database_matches_the_models(store_url) -> None:
    """On a SQLite file and on a real PostgreSQL server."""
    store = Store(store_url)
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == [], f"schema.py and the migrations disagree: {diff}"


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
        assert conn.execute("SELECT COUNT(*) FROM episode_moves").fetchone()[0] == 0
