"""lexicoord ships its types (``py.typed``): a plugin's own mypy checks its calls into lexicoord and its rules'
reading of its item model, and the protocol entry hands out each part typed, with a sentence naming the protocol
when a part cannot be loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lexicoord.core.protocol import Protocol
from lexicoord.core.registry import ProtocolEntry, get_protocol
from lexicoord.errors import ConfigError

PLUGIN = '''
from pathlib import Path

from lexicoord.core.registry import get_protocol
from lexicoord.runs.store import Store

entry = get_protocol("coordination")
report = entry.report_writer()
store = Store(None)
written = report(store, store.run("x"), Path("out"))
tables: int = written.tables
'''


def test_a_plugins_mypy_sees_lexicoords_types(tmp_path: Path) -> None:
    (tmp_path / "plugin.py").write_text(PLUGIN)
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                              "plugin.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "import-untyped" not in checked.stdout and "missing library stubs" not in checked.stdout, checked.stdout
    # The one mistake in the file is found, so the types were read: a report's tables are a list, not an int.
    assert checked.returncode == 1 and 'plugin.py:11: error: Incompatible types in assignment (expression has type ' \
        '"list[ReportTable]", variable has type "int")' in checked.stdout, checked.stdout


ITEM_PLUGIN = '''
from pydantic import BaseModel

from lexicoord.core import EpisodeContext, Protocol


class Word(BaseModel):
    word: str


class Said(BaseModel):
    said: str


class Say(Protocol[Word, BaseModel, Said]):
    name = "say"
    item_model = Word
    outcome_model = Said

    async def play(self, ctx: EpisodeContext[Word]) -> Said:
        return Said(said=ctx.item.sentence)


class Untyped(Protocol[Word, BaseModel, Said]):
    name = "untyped"
    item_model = Word
    outcome_model = Said

    async def play(self, ctx: EpisodeContext) -> Said:
        return Said(said=ctx.item["word"])
'''


def test_a_plugins_mypy_catches_a_field_its_item_model_does_not_have(tmp_path: Path) -> None:
    (tmp_path / "plugin.py").write_text(ITEM_PLUGIN)
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                              "plugin.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert checked.returncode == 1, checked.stdout
    # The rules read a field the item model lacks: found where it is read, not when an episode fails.
    assert 'plugin.py:21: error: "Word" has no attribute "sentence"  [attr-defined]' in checked.stdout, checked.stdout
    # A play that takes the spec's dict while the protocol names an item model is not the protocol's play.
    assert 'plugin.py:29: error: Argument 1 of "play" is incompatible with supertype' in checked.stdout, checked.stdout
    assert checked.stdout.count("error:") == 2, checked.stdout


class Echo(Protocol):
    name = "echo-typed"

    async def play(self, ctx):  # type: ignore[no-untyped-def]  # pragma: no cover - never played here
        raise NotImplementedError


@pytest.mark.parametrize(("field", "target", "accessor", "said"), [
    ("report", "lexicoord.nowhere:report", "report_writer", "its report 'lexicoord.nowhere:report' cannot be loaded"),
    ("report", "lexicoord.errors:__doc__", "report_writer", "is not a function"),
    ("room", "lexicoord.errors:ConfigError", "room_adapter", None),
    ("room", "lexicoord.errors:__name__", "room_adapter", "is not a class"),
    ("experiment", "lexicoord.errors:ConfigError", "plan", "is not a plan"),
    ("statistics", None, "statistics_reader", "has no statistics"),
])
def test_each_part_is_loaded_typed_or_refused_with_the_protocols_name(field: str, target: str | None, accessor: str,
                                                                      said: str | None) -> None:
    entry = ProtocolEntry(name="echo-typed", summary="a test", protocol=Echo, **{field: target})
    if said is None:
        assert getattr(entry, accessor)() is ConfigError
        return
    with pytest.raises(ConfigError, match="Protocol 'echo-typed'") as refused:
        getattr(entry, accessor)()
    assert said in str(refused.value)


def test_the_built_ins_parts_load_through_their_accessors() -> None:
    for name in ("coordination", "debate", "cogent", "werewolf"):
        entry = get_protocol(name)
        assert callable(entry.report_writer()) and callable(entry.statistics_reader())
        assert callable(entry.outcomes_reader()) and callable(entry.plan().campaign)
        assert isinstance(entry.room_adapter(), type) and entry.command_group().registered_commands
