"""KnowNo's task files: readings in words, the intent, which tasks need a question, and every bad block by line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.jsonl import DatasetError
from lexicoord.tasks.knowno import load_knowno, reading
from tests.conftest import shared_data

TASK = """{index}
Scene: a Pepsi, a Coke, and a RedBull
Task: Bring me that caffeinated drink.
User intent (object): RedBull
User intent (location): pick-up
Possible objects: RedBull, Coke, Pepsi
Possible locations: pick-up
Scene objects: Pepsi, Coke, RedBull
Task category: {category}
"""


def write(tmp_path: Path, text: str, name: str = "tasks.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_the_shipped_copy_loads_whole_and_counts_what_it_skips() -> None:
    loaded = load_knowno(shared_data("knowno/mobile_manipulation.txt"))
    assert len(loaded.items) == 541 and loaded.skipped == {"unsafe tasks (their intent is the unsafe action)": 59}
    kinds = Counter((i.category, i.ambiguous) for i in loaded.items)
    # single-label and spatial tasks need a question; multi-label, Winograd and unambiguous ones do not
    assert kinds[("singlelabel_task", True)] == 183 and kinds[("spatial_ambiguous_task", True)] == 126
    assert kinds[("multilabel_task", False)] == 26 and kinds[("winograd_task", False)] == 95
    assert not any(a for (c, a) in kinds if c in ("unambiguous_task", "multilabel_task"))
    assert len({i.id for i in loaded.items}) == 541
    assert all(set(i.intended) <= set(i.options) and 2 <= len(i.options) <= 8 for i in loaded.items)


def test_a_folder_reads_every_file_and_a_limit_stops_early() -> None:
    folder = shared_data("knowno")
    whole = load_knowno(folder)
    assert len(whole.items) == 541 + 160 + 82
    assert len(load_knowno(folder, limit=5).items) == 5


@pytest.mark.parametrize(("obj", "location", "expected"), [
    ("Coke", "pick-up", "pick up the Coke and bring it to the person"),
    ("orange soda", "recycling", "put the orange soda in the recycling bin"),
    ("apple", "top drawer", "put the apple in the top drawer"),
    ("metal bowl", "cooktop", "put the metal bowl on the cooktop"),
    ("apple", "Sprite", "put the apple next to the Sprite"),
    ("kettle chips", "Microwave", "put the kettle chips in the Microwave"),
])
def test_each_object_and_location_read_as_an_action(obj: str, location: str, expected: str) -> None:
    assert reading(obj, location) == expected


def test_a_single_label_task_needs_a_question_and_means_one_reading(tmp_path: Path) -> None:
    item = load_knowno(write(tmp_path, TASK.format(index=7, category="singlelabel_task"))).items[0]
    assert item.ambiguous and item.intended == ["pick up the RedBull and bring it to the person"]
    assert sorted(item.element) == ["Coke", "Pepsi", "RedBull"]
    assert item.context == "Scene: a Pepsi, a Coke, and a RedBull"
    assert item.gate_item()["candidates"] == item.options and "RedBull" not in item.gate_item()["instruction"]


def test_a_multilabel_task_is_clear_because_any_reading_is_meant(tmp_path: Path) -> None:
    text = TASK.format(index=1, category="multilabel_task").replace("User intent (object): RedBull",
                                                                   "User intent (object): RedBull, Coke, Pepsi")
    item = load_knowno(write(tmp_path, text)).items[0]
    assert not item.ambiguous and len(item.intended) == 3


def test_messy_files_windows_line_ends_spaces_and_no_final_newline(tmp_path: Path) -> None:
    text = ("\r\n\r\n" + TASK.format(index=0, category="singlelabel_task").replace("\n", "  \r\n")
            + "\r\n\r\n\r\n" + TASK.format(index=1, category="unambiguous_task").rstrip("\n"))
    loaded = load_knowno(write(tmp_path, text))
    assert [i.id for i in loaded.items] == ["knowno-tasks-0", "knowno-tasks-1"]
    assert loaded.items[0].instruction == "Bring me that caffeinated drink."


def test_options_are_shuffled_the_same_way_every_time(tmp_path: Path) -> None:
    path = write(tmp_path, "".join(TASK.format(index=i, category="singlelabel_task") + "\n" for i in range(12)))
    first = [i.options for i in load_knowno(path).items]
    assert first == [i.options for i in load_knowno(path).items]
    # the file lists the intended object first; across tasks it is not always the first option
    assert {o[0] for o in first} != {"pick up the RedBull and bring it to the person"}


def test_every_bad_block_is_reported_with_its_line(tmp_path: Path) -> None:
    good = TASK.format(index=0, category="singlelabel_task")
    missing = TASK.format(index=1, category="singlelabel_task").replace("Possible objects: RedBull, Coke, Pepsi\n", "")
    unknown = TASK.format(index=2, category="singlelabel_task").replace("Task:", "Instruction:")
    path = write(tmp_path, f"{good}\n{missing}\n{unknown}")
    with pytest.raises(DatasetError) as caught:
        load_knowno(path)
    reasons = {e.line: e.reason for e in caught.value.errors}
    # the block lacking a field at its first line; the unknown key at its own line, and then its block lacks a Task
    assert set(reasons) == {11, 20, 22}, reasons
    assert "Possible objects" in reasons[11] and "Instruction" in reasons[22] and "Task" in reasons[20]


def test_unsafe_tasks_are_skipped_and_counted(tmp_path: Path) -> None:
    text = TASK.format(index=0, category="serious_unsafe_task") + "\n" + TASK.format(index=1, category="unsafe_task")
    loaded = load_knowno(write(tmp_path, text + "\n" + TASK.format(index=2, category="singlelabel_task")))
    assert len(loaded.items) == 1 and sum(loaded.skipped.values()) == 2


def test_a_missing_path_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KnowNo tasks not found"):
        load_knowno(tmp_path / "nope.txt")


def test_a_file_saved_with_a_byte_order_mark_reads_the_same(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff" + TASK.format(index=3, category="singlelabel_task"))
    assert [i.id for i in load_knowno(path).items] == ["knowno-tasks-3"]


def test_a_disposal_task_offers_the_other_bins_so_the_place_is_not_given_away(tmp_path: Path) -> None:
    text = TASK.format(index=0, category="winograd_task").replace("pick-up", "recycling").replace(
        "Possible objects: RedBull, Coke, Pepsi", "Possible objects: RedBull").replace(
        "User intent (object): RedBull", "User intent (object): RedBull")
    item = load_knowno(write(tmp_path, text)).items[0]
    assert "put the RedBull in the landfill bin" in item.options and "put the RedBull in the compost bin" in item.options
    assert item.intended == ["put the RedBull in the recycling bin"] and not item.ambiguous
