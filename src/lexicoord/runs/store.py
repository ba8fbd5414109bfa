"""Runs, episodes and events in any SQLAlchemy database (a SQLite file by default).

An episode is written once, when it ends, together with all its events, in a
single transaction: a crash leaves either the whole episode or nothing of it.
A failed episode that is retried is replaced by the new attempt in that same
transaction. A live room's game is also kept while it is played, as a spectator
sees it (:meth:`Store.keep_live`): that row becomes the ended episode when it is
saved, with every event, exactly as an episode written only at its end.

The answers of a game still in play are journaled in one table for campaigns
and rooms alike (:meth:`Store.add_episode_moves`, :meth:`Store.episode_moves`),
so a crash or a restart replays them; saving the episode settles its journal.

This module is the store's one face; each concern lives in a module of its own, and :class:`Store` is them all:

- :mod:`~lexicoord.runs.tables`: the tables, in SQLAlchemy Core (:mod:`~lexicoord.runs.schema` maps ORM classes
  onto them);
- :mod:`~lexicoord.runs.store_engine`: the database, its migration, its sessions and a read-only handle;
- :mod:`~lexicoord.runs.store_rows`: how episode and event rows are written and read back;
- :mod:`~lexicoord.runs.store_runs`: runs, their resume rules and their state, in Core statements alone (``lexicoord
  runs list`` opens this part by itself, without the ORM);
- :mod:`~lexicoord.runs.store_saving`: saving ended episodes (retries, live rows, second saves);
- :mod:`~lexicoord.runs.store_episodes`: reading ended episodes and their events whole;
- :mod:`~lexicoord.runs.store_pages`: reading page by page, for the run viewer;
- :mod:`~lexicoord.runs.store_journal`: the journal of moves of games still in play;
- :mod:`~lexicoord.runs.store_live`: live games, kept as they are played.
"""

from __future__ import annotations

from lexicoord.runs.store_engine import SCHEMA_HEAD
from lexicoord.runs.store_episodes import Episodes
from lexicoord.runs.store_journal import Journal, Move
from lexicoord.runs.store_live import LiveGame, LiveGames, LiveWrite
from lexicoord.runs.store_pages import Pages, Scalar
from lexicoord.runs.store_runs import NOTES, RUNTIME, differences
from lexicoord.runs.store_saving import Saving
from lexicoord.runs.tables import CONFLICT, PLAYING

__all__ = ["CONFLICT", "NOTES", "PLAYING", "RUNTIME", "SCHEMA_HEAD", "LiveGame", "LiveWrite", "Move", "Scalar",
           "Store", "differences"]


class Store(Episodes, Pages, Saving, LiveGames, Journal):
    """Runs, episodes and events in one database: ``Store(url)`` opens it (a SQLite file by default) and brings
    its schema up to date."""
