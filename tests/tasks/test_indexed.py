"""A dataset file checked to its last line but held as an index: choosing one item of a large file costs the
memory of one item, and bad lines are reported exactly as a full load reports them."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from lexicoord.errors import ConfigError
from lexicoord.protocols.coordination.lineup import dataset_from
from lexicoord.tasks import indexed
from lexicoord.tasks.ambiguous import TASK, AmbiguityItem, DatasetError, builtin_items, load_jsonl
from lexicoord.tasks.indexed import IndexedItems, index_jsonl

GOOD = {"id": "x1", "sentence": "Meet me at the bank.", "word": "bank", "options": ["river side", "money place"],
        "intended": "river side", "open": False}


def large_file(tmp_path: Path, items: int) -> Path:
    """``items`` valid items cycled from the built-in set, each with its own id; blank lines and CRLF here and
    there, as files written by hand or on Windows have them."""
    base = [i.model_dump(mode="json") for i in builtin_items()]
    path = tmp_path / "large.jsonl"
    with path.open("w", encoding="utf-8", newline="") as fh:
        for n in range(items):
            fh.write(json.dumps({**base[n % len(base)], "id": f"item-{n}"}, ensure_ascii=False))
            fh.write("\r\n" if n % 7 == 3 else "\n")
            if n % 100 == 50:
                fh.write("\n   \n")
    return path


def peak_bytes(call) -> int:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_one_item_of_a_large_file_costs_a_small_part_of_holding_them_all(tmp_path: Path) -> None:
    path = large_file(tmp_path, 4000)
    everything = peak_bytes(lambda: TASK.load(str(path)))
    one = peak_bytes(lambda: list(dataset_from(str(path), 1, None, None)))
    sampled = peak_bytes(lambda: list(dataset_from(str(path), 1, 7, None)))
    assert everything > 4000 * 1000, "the reference: every item as an object, kilobytes each"
    assert one < everything / 8 and sampled < everything / 8, (one, sampled, everything)


def test_the_items_read_back_are_the_items_a_full_load_gives(tmp_path: Path) -> None:
    path = large_file(tmp_path, 450)
    full = TASK.load(str(path))
    indexed = TASK.index(str(path))
    assert isinstance(indexed, IndexedItems) and len(indexed) == len(full)
    assert list(indexed) == full
    assert [indexed[i] for i in (0, 1, 449, -1, 200)] == [full[i] for i in (0, 1, 449, -1, 200)]
    assert list(indexed[10:20]) == full[10:20]
    with pytest.raises(IndexError):
        indexed[450]


@pytest.mark.parametrize("seed", [None, 0, 7, 12345])
@pytest.mark.parametrize("limit", [None, 1, 5, 300])
def test_a_seed_and_a_limit_choose_the_items_they_chose_before(tmp_path: Path, seed: int | None,
                                                                limit: int | None) -> None:
    """The old rule: shuffle the loaded list with ``Random(seed).sample``, then take the first ``limit``."""
    path = large_file(tmp_path, 300)
    full = TASK.load(str(path))
    expected = random.Random(seed).sample(full, len(full)) if seed is not None else full
    expected = expected[:limit] if limit else expected
    assert list(dataset_from(str(path), limit, seed, None)) == expected


def test_a_category_keeps_only_its_items_and_an_absent_one_is_one_sentence(tmp_path: Path) -> None:
    path = large_file(tmp_path, 300)
    chosen = list(dataset_from(str(path), None, 3, "polysemy"))
    full = [i for i in TASK.load(str(path)) if i.category == "polysemy"]
    assert chosen == random.Random(3).sample(full, len(full))
    with pytest.raises(ConfigError, match="No items of category 'wsd'"):
        dataset_from(str(path), 1, None, "wsd")


def test_bad_lines_are_reported_with_their_numbers_as_a_full_load_reports_them(tmp_path: Path) -> None:
    lines = [
        json.dumps(GOOD),
        "{not json",
        json.dumps({**GOOD, "id": "x2", "word": "river"}),
        json.dumps({**GOOD, "id": "x3", "options": ["only one"]}),
        "",
        json.dumps(GOOD),
        "[1, 2]",
        json.dumps({**GOOD, "id": "x4"}),
        json.dumps({**GOOD, "id": "x4", "sentence": "The bank again."}),
        json.dumps({**GOOD, "id": "x1", "sentence": "A third bank."}),
        json.dumps({**GOOD, "id": "x6", "colour": "red"}),
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DatasetError) as full:
        load_jsonl(path)
    with pytest.raises(DatasetError) as indexed:
        index_jsonl(path, AmbiguityItem)
    assert indexed.value.errors == full.value.errors
    assert str(indexed.value) == str(full.value)
    reasons = {e.line: e.reason for e in indexed.value.errors}
    assert reasons[6] == "id 'x1' repeats line 1" and reasons[9] == "id 'x4' repeats line 8"
    assert reasons[10] == "id 'x1' repeats line 1" and "not valid JSON" in reasons[2]
    with pytest.raises(DatasetError, match="bad line"):
        dataset_from(str(path), 1, None, None)


def test_ids_that_share_a_hash_are_not_taken_for_repeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The uniqueness check keeps hashes; two ids of one hash are told apart by a second read."""
    path = large_file(tmp_path, 50)
    monkeypatch.setattr(indexed, "key_hash", lambda value: 1)  # every id collides
    assert len(index_jsonl(path, AmbiguityItem)) == 50


def test_a_file_changed_after_it_was_checked_is_refused_not_misread(tmp_path: Path) -> None:
    path = large_file(tmp_path, 20)
    items = TASK.index(str(path))
    first = items[0]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"item-0"', '"item-Z"', 1).replace("bank", "BANK"), encoding="utf-8")
    with pytest.raises(ConfigError, match="changed since it was checked"):
        items[0]
    assert first.id == "item-0"


def test_an_empty_file_and_a_missing_file_are_one_sentence(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds no items"):
        dataset_from(str(empty), 1, None, None)
    with pytest.raises(ConfigError, match="Cannot read the dataset"):
        dataset_from(str(tmp_path / "nope.jsonl"), 1, None, None)
