"""The ORM classes name the columns of the Core tables they map, with the tables' own Python types and nullability.

The tables are defined once (runs/tables.py); the classes' annotations exist only for the type checker, so nothing
but this test notices an annotation that no longer says what its column holds.
"""

from __future__ import annotations

import subprocess
import sys
import types
import typing
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from sqlalchemy import JSON, Table
from sqlalchemy.orm import Mapped

from lexicoord.runs import schema, tables

CLASSES = [c for c in vars(schema).values() if isinstance(c, type) and issubclass(c, schema.Base) and c is not schema.Base]


def _columns(cls: type) -> dict[str, tuple[Any, bool]]:
    """Each annotated column: the Python type it says, and whether it says ``| None``."""
    out: dict[str, tuple[Any, bool]] = {}
    for name, hint in get_type_hints(cls, vars(schema)).items():
        if get_origin(hint) is not Mapped:
            continue
        (inner,) = get_args(hint)
        parts = get_args(inner) if get_origin(inner) in (typing.Union, types.UnionType) else (inner,)
        kinds = [p for p in parts if p is not type(None)]
        assert len(kinds) == 1, f"{cls.__name__}.{name}: {hint}"
        kind = get_origin(kinds[0]) or kinds[0]
        out[name] = (kind, len(kinds) < len(parts))
    return out


def test_every_table_is_mapped_once() -> None:
    mapped = sorted(c.__table__.name for c in CLASSES)  # type: ignore[attr-defined]
    assert mapped == sorted(tables.METADATA.tables)
    assert all(isinstance(getattr(tables, n), Table) for n in ("RUNS", "EPISODES", "EVENTS", "CLAIMS", "ROOMS"))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_each_class_names_its_tables_columns_with_their_types_and_nullability(cls: type) -> None:
    table: Table = cls.__table__  # type: ignore[attr-defined]
    said = _columns(cls)
    assert sorted(said) == sorted(c.key for c in table.columns)
    for column in table.columns:
        kind, optional = said[column.key]
        assert optional == column.nullable, f"{cls.__name__}.{column.key}: nullable is {column.nullable}"
        # Every JSON column of the store holds an object (a mapping), which JSON's own ``python_type`` cannot say.
        expected = dict if isinstance(column.type, JSON) else column.type.python_type
        assert kind is expected, f"{cls.__name__}.{column.key}: {kind} against {column.type}"


def test_a_class_whose_annotation_disagrees_with_its_table_is_caught() -> None:
    """The check above can fail: an annotation that drops ``| None`` or names another type is found."""

    class Wrong:
        __table__ = tables.RESPONSES
        key: Mapped[str | None]
        model: Mapped[int]
        created_at: Mapped[float]
        output: Mapped[str]

    said = _columns(Wrong)
    assert said["key"] == (str, True) and not tables.RESPONSES.c.key.nullable
    assert said["model"][0] is not tables.RESPONSES.c.model.type.python_type


def test_listing_runs_imports_neither_the_orm_nor_the_event_models(tmp_path) -> None:
    """What keeps ``lexicoord runs list`` quick to start: the store's runs are read with Core statements alone."""
    code = (
        "import sys\n"
        "from lexicoord.runs.store_runs import Runs\n"
        f"runs = Runs({str('sqlite:///' + str(tmp_path / 'r.db'))!r})\n"
        "runs.open_run('r1', 'toy', {}, 2)\n"
        "print([r.id for r in runs.runs()], runs.run('r1').status)\n"
        "print(sorted(m for m in sys.modules if m == 'sqlalchemy.orm' or m.startswith('lexicoord.core')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['r1'] running"
    # A new file is migrated by Alembic, whose environment reads the tables alone; a store at its newest schema is
    # not even that.
    reopened = subprocess.run([sys.executable, "-c", code.replace("runs.open_run('r1', 'toy', {}, 2)\n", "")],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    assert reopened[0] == "['r1'] running"
    assert reopened[1] == "[]", reopened[1]
