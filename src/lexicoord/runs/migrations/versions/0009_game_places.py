"""A live game's identity includes where it was played: stored room games are keyed anew with their place.

A room's game is an episode whose spec now has a ``place`` (the room, the game's number, a study's group), and
the place is part of the episode's key, so two rooms or two groups of a study that play the same item with the
same seats are two episodes. This migration gives every stored game of a room its place and its new key, and
follows the key everywhere it is written:

- a study's room (``state.managed.games`` lists its games' keys in order): game N is the N-th key, its group
  the study group whose ``room`` is the room's code;
- any other room: the episodes of the room's own run, game N at position N (a room stores game N there);
- the game a room's state names current (its spec gains the place, its journal in ``moves`` and its live row
  follow the new key), each room's list of its games, and each study group's list of its games.

Episodes of a campaign, and rows this cannot place (a run several unmanaged rooms share), keep their keys.
Games that an older version dropped (a second group's game saved under the first's key) were never stored;
no migration can bring them back.

The downgrade takes the places out again and gives back the old keys. Where two stored games would then have
one key (two groups played the same item), it stops and changes nothing: the older code cannot hold both.

Revision ID: 0009_game_places
Revises: 0008_studies
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009_game_places"
down_revision = "0008_studies"
branch_labels = None
depends_on = None

#: The tables as this migration reads and writes them (not the models, which move on).
rooms = sa.table("rooms", sa.column("id", sa.String), sa.column("code", sa.String), sa.column("run_id", sa.String),
                 sa.column("state", sa.JSON))
studies = sa.table("studies", sa.column("id", sa.String), sa.column("state", sa.JSON))
episodes = sa.table("episodes", sa.column("id", sa.Integer), sa.column("run_id", sa.String),
                    sa.column("key", sa.String), sa.column("position", sa.Integer), sa.column("status", sa.String),
                    sa.column("spec", sa.JSON))
moves = sa.table("moves", sa.column("run_id", sa.String), sa.column("key", sa.String))

Place = dict[str, Any]
log = logging.getLogger("alembic.runtime.migration")


def _key(spec: dict[str, Any]) -> str | None:
    """A spec's key as the code computes it (a spec with a place: with it; without: as it always was); None for
    a spec that no longer reads (its game is never played again, and keeps its key)."""
    from lexicoord.core.spec import EpisodeSpec

    try:
        return EpisodeSpec.model_validate(spec).key
    except ValueError:
        return None


def _game(state: dict[str, Any]) -> dict[str, Any]:
    game = state.get("game")
    return game if isinstance(game, dict) else {}


def _groups(bind: sa.Connection) -> dict[tuple[str, str], str]:
    """Each study room, by its study and its code: the group that plays in it."""
    out: dict[tuple[str, str], str] = {}
    for study_id, state in bind.execute(sa.select(studies.c.id, studies.c.state)).all():
        for gid, group in ((state or {}).get("groups") or {}).items():
            if isinstance(group, dict) and group.get("room"):
                out[(study_id, group["room"])] = gid
    return out


def _rekey(bind: sa.Connection, places: bool) -> None:
    """Give stored room games their places (``places``) or take them out, with every reference to their keys.
    Everything is worked out before anything is written, so a refusal changes nothing."""
    groups = _groups(bind)
    room_rows = bind.execute(sa.select(rooms.c.id, rooms.c.code, rooms.c.run_id, rooms.c.state)).all()
    unmanaged_runs: dict[str, int] = {}
    listed: dict[tuple[str, str], int] = {}  # (run, key): how many study rooms list the game as theirs
    for _, _, run_id, state in room_rows:
        managed = (state or {}).get("managed")
        if not managed:
            unmanaged_runs[run_id] = unmanaged_runs.get(run_id, 0) + 1
        elif isinstance(managed, dict):
            for key in set(managed.get("games") or []):
                listed[(run_id, key)] = listed.get((run_id, key), 0) + 1
    renamed: dict[tuple[str, str], str] = {}  # (run, old key) -> new key
    specs: dict[int, dict[str, Any]] = {}  # episode id -> its spec with (or without) its place
    states: dict[str, dict[str, Any]] = {}  # room id -> its state with the new keys
    for room_id, code, run_id, saved in room_rows:
        state = copy.deepcopy(saved or {})
        managed = state.get("managed") if isinstance(state.get("managed"), dict) else None
        group = groups.get((str(managed.get("study")), code)) if managed else None
        place_of = {"room": room_id, **({"group": group} if group else {})}
        current = _game(state).get("current")
        by_game: dict[int, str] = {}
        if managed:
            # A game two groups' rooms both list is the defect this migration follows: the older release stored
            # one of the two games under their shared key. Which group's it is cannot be told, so it keeps its key.
            by_game = {n: k for n, k in enumerate(managed.get("games") or [], start=1) if listed[(run_id, k)] == 1}
            for k in {k for k in managed.get("games") or [] if listed[(run_id, k)] > 1}:
                log.warning("run %s: game %s is listed by more than one group's room (an older release kept one of "
                            "their games under one key); it keeps its key and gets no place", run_id, k)
            if places and group:
                managed["group"] = group  # its games from now on are placed in its group
            elif not places:
                managed.pop("group", None)
                managed.pop("condition", None)
            states[room_id] = state
        elif unmanaged_runs.get(run_id) == 1:
            for key, position in bind.execute(sa.select(episodes.c.key, episodes.c.position)
                                              .where(episodes.c.run_id == run_id)).all():
                by_game.setdefault(position, key)
        if isinstance(current, dict) and isinstance(current.get("spec"), dict) and isinstance(current.get("number"), int):
            old, spec = _key(current["spec"]), _placed(current["spec"], place_of, current["number"], places)
            new = _key(spec)
            if old is not None and new is not None and listed.get((run_id, old), 0) <= 1:
                current["spec"] = spec
                by_game.setdefault(current["number"], old)
                renamed[(run_id, old)] = new
                states[room_id] = state
        for number, old in by_game.items():
            row = bind.execute(sa.select(episodes.c.id, episodes.c.spec)
                               .where(episodes.c.run_id == run_id, episodes.c.key == old)).first()
            if row is None:
                continue
            spec = _placed(row.spec or {}, place_of, number, places)
            # A game in progress keeps only a spectator's spec in its row: its key is its current spec's (above).
            new = renamed.get((run_id, old)) or _key(spec)
            if new is not None:
                specs[row.id] = spec
                renamed[(run_id, old)] = new
        if managed:
            managed["games"] = [renamed.get((run_id, k), k) for k in managed.get("games") or []]
            states[room_id] = state
    renamed = {k: v for k, v in renamed.items() if k[1] != v}
    _check_distinct(bind, renamed)
    for episode_id, spec in specs.items():
        bind.execute(sa.update(episodes).where(episodes.c.id == episode_id).values(spec=spec))
    for room_id, state in states.items():
        bind.execute(sa.update(rooms).where(rooms.c.id == room_id).values(state=state))
    for (run_id, old), new in renamed.items():  # through a key no row has, so two swapped keys never meet
        bind.execute(sa.update(episodes).where(episodes.c.run_id == run_id, episodes.c.key == old)
                     .values(key=f"~{new}"))
        bind.execute(sa.update(moves).where(moves.c.run_id == run_id, moves.c.key == old).values(key=f"~{new}"))
    for (run_id, _), new in renamed.items():
        bind.execute(sa.update(episodes).where(episodes.c.run_id == run_id, episodes.c.key == f"~{new}")
                     .values(key=new))
        bind.execute(sa.update(moves).where(moves.c.run_id == run_id, moves.c.key == f"~{new}").values(key=new))
    for study_id, saved in bind.execute(sa.select(studies.c.id, studies.c.state)).all():
        state = copy.deepcopy(saved or {})
        changed = False
        for group in (state.get("groups") or {}).values():
            for game in group.get("games") or []:
                if (f"study-{study_id}", game.get("key")) in renamed:
                    game["key"], changed = renamed[(f"study-{study_id}", game["key"])], True
        if changed:
            bind.execute(sa.update(studies).where(studies.c.id == study_id).values(state=state))


def _placed(spec: dict[str, Any], place: Place, number: int, places: bool) -> dict[str, Any]:
    out = dict(spec)
    if places:
        out["place"] = {**place, "game": number}
    else:
        out.pop("place", None)
    return out


def _check_distinct(bind: sa.Connection, renamed: dict[tuple[str, str], str]) -> None:
    """Two games of a run must not end under one key (only a downgrade can make them meet)."""
    targets: dict[tuple[str, str], str] = {}
    for (run_id, old), new in renamed.items():
        if (run_id, new) in targets:
            raise RuntimeError(f"run {run_id}: games {old} and {targets[(run_id, new)]} would both be {new} without "
                               "their places; the older version cannot hold both, so nothing was changed")
        targets[(run_id, new)] = old
    untouched = {(run_id, key) for run_id, key in bind.execute(sa.select(episodes.c.run_id, episodes.c.key)).all()}
    untouched -= set(renamed)
    clash = [t for t in targets if t in untouched]
    if clash:
        raise RuntimeError(f"run {clash[0][0]}: key {clash[0][1]} is already another episode's; nothing was changed")


def upgrade() -> None:
    _rekey(op.get_bind(), places=True)


def downgrade() -> None:
    _rekey(op.get_bind(), places=False)
