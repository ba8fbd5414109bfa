"""AmbiK's CSV, read from rows written here in its own columns: both twins, variants, intent, bad rows by line."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambik import intent_share, load_ambik, variants
from lexicoord.tasks.jsonl import DatasetError

COLUMNS = ["id", "environment_short", "environment_full", "unambiguous_direct", "ambiguity_type", "amb_shortlist",
           "ambiguous_task", "question", "answer", "plan_for_clear_task", "plan_for_amb_task", "end_of_ambiguity",
           "user_intent", "variants", "take_amb"]
#: The test split's header: an unnamed index column first, and the indirect twin.
SPLIT_COLUMNS = ["", "id", "environment_short", "environment_full", "unambiguous_direct", "unambiguous_indirect",
                 "ambiguity_type", "amb_shortlist", "ambiguous_task", "question", "answer", "plan_for_clear_task",
                 "plan_for_amb_task", "end_of_ambiguity", "user_intent", "variants"]


def row(**over: Any) -> dict[str, Any]:
    base = {
        "id": "7", "environment_short": "frying pan, grill pan, saucepan, bacon",
        "environment_full": "a frying pan, a grill pan, a saucepan, bacon",
        "unambiguous_direct": "Use the frying pan to cook two slices of bacon until crispy.",
        "unambiguous_indirect": "Robot, please use the pan to cook two bacon slices until crispy.",
        "ambiguity_type": "preferences", "amb_shortlist": "frying pan, grill pan, saucepan",
        "ambiguous_task": "Cook two slices of bacon.", "question": "What should I use to cook the bacon?",
        "answer": "Use the frying pan.", "plan_for_clear_task": "1. Pick up two slices of bacon.\n2. Use the frying pan.",
        "plan_for_amb_task": "1. Pick up two slices of bacon.\n2. Cook them.", "end_of_ambiguity": "1",
        "user_intent": "frying pan", "variants": "Frying pan\nGrill pan", "take_amb": "1.0",
    }
    return base | over


def write(tmp_path: Path, rows: list[dict[str, Any]], columns: list[str] = COLUMNS) -> Path:
    path = tmp_path / "ambik.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for i, r in enumerate(rows):
            writer.writerow([str(i) if c == "" else r.get(c, "") for c in columns])
    return path


def test_each_pair_gives_both_twins_with_the_scene_variants_and_intent(tmp_path: Path) -> None:
    items = load_ambik(write(tmp_path, [row()])).items
    amb, clear = items
    assert (amb.id, clear.id) == ("ambik-7/ambiguous", "ambik-7/unambiguous")
    assert amb.ambiguous and not clear.ambiguous and amb.pair == clear.id and clear.pair == amb.id
    assert amb.instruction == "Cook two slices of bacon." and clear.instruction.startswith("Use the frying pan")
    assert (amb.category, clear.category) == ("preferences", "unambiguous_direct")
    assert amb.options == ["Frying pan", "Grill pan"] and amb.intended == ["Frying pan"]
    assert amb.context == "Objects in the kitchen: a frying pan, a grill pan, a saucepan, bacon"
    assert amb.element == ["frying pan", "grill pan", "saucepan"] and amb.ambiguous_set == ["Frying pan", "Grill pan"]
    assert amb.question == "What should I use to cook the bacon?" and amb.answer == "Use the frying pan."
    seen = amb.gate_item()
    assert "frying pan" not in seen["instruction"].casefold() and seen["gold"]["answer"] == "Use the frying pan."


def test_the_test_split_with_its_index_column_and_the_indirect_twin(tmp_path: Path) -> None:
    path = write(tmp_path, [row(), row(id="8")], SPLIT_COLUMNS)
    direct = load_ambik(path).items
    indirect = load_ambik(path, twin="indirect").items
    assert len(direct) == 4 and direct[1].instruction.startswith("Use the frying pan")
    assert indirect[1].instruction.startswith("Robot, please use the pan") and indirect[1].category == "unambiguous_indirect"


@pytest.mark.parametrize(("value", "expected"), [
    ("Frying pan\nGrill pan", [("Frying pan", False), ("Grill pan", False)]),
    ("yolks, whites", [("yolks", False), ("whites", False)]),
    ("ceramic bowl, -stainless steel bowl", [("ceramic bowl", False), ("stainless steel bowl", True)]),
    ("Yes, wash the vegetables before chopping them.\nNo, do not wash the vegetables before chopping them.",
     [("Yes, wash the vegetables before chopping them.", False),
      ("No, do not wash the vegetables before chopping them.", False)]),
    ("  kitchen table\n\nsaucepan  \n", [("kitchen table", False), ("saucepan", False)]),
    ("black pepper", [("black pepper", False)]),
    ("", []),
])
def test_variants_as_ambik_writes_them(value: str, expected: list[tuple[str, bool]]) -> None:
    assert variants(value) == expected


@pytest.mark.parametrize(("text", "intent", "share"), [
    ("Use the frying pan.", ["frying pan"], 1.0),
    ("USE THE FRYING-PAN!", ["frying pan"], 1.0),                      # case, hyphens and punctuation aside
    ("Cook two slices of bacon.", ["frying pan"], 0.0),
    ("Beat the yolks and whites together", ["yolks", "whites"], 1.0),
    ("Beat the yolks", ["yolks", "whites"], 0.5),
    ("Heat it in the ceramic bowl", ["ceramic bowl", "-stainless steel bowl"], 1.0),
    ("Heat it in the stainless steel bowl", ["ceramic bowl", "-stainless steel bowl"], 0.0),
    ("Heat it in a bowl", ["ceramic bowl", "-stainless steel bowl"], 0.5),
    ("Grab the panko crumbs", ["pan"], 0.0),                              # whole words, not raw substrings
    ("use the Chef's knife", ["chef's knife|paring knife"], 1.0),
    ("", ["frying pan"], 0.0),
    ("anything", [], 0.0),
])
def test_ambiks_success_rule_on_answers_written_as_people_and_models_write(text: str, intent: list[str],
                                                                          share: float) -> None:
    assert intent_share(text, intent) == pytest.approx(share)


def test_bad_rows_are_reported_by_the_line_they_start_on(tmp_path: Path) -> None:
    # the first row's plans span lines, so the second row starts on line 6, not line 3
    path = write(tmp_path, [row(), row(id="9", ambiguity_type="Preference"), row(id="10", user_intent=" "),
                            row(id="11")])
    with pytest.raises(DatasetError) as caught:
        load_ambik(path)
    lines = [e.line for e in caught.value.errors]
    assert lines == [6, 10], caught.value.errors
    assert "ambiguity_type 'Preference'" in caught.value.errors[0].reason
    assert "user_intent is empty" in caught.value.errors[1].reason


def test_a_file_without_ambiks_columns_says_which_are_missing(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("instruction,answer\nfry it,yes\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="not AmbiK's columns: no id"):
        load_ambik(path)


def test_empty_rows_are_skipped_and_counted_and_a_limit_counts_items(tmp_path: Path) -> None:
    path = write(tmp_path, [row(), {c: "" for c in COLUMNS}, row(id="8")])
    loaded = load_ambik(path)
    assert len(loaded.items) == 4 and loaded.skipped == {"empty rows": 1}
    assert [i.id for i in load_ambik(path, limit=3).items] == ["ambik-7/ambiguous", "ambik-7/unambiguous",
                                                               "ambik-8/ambiguous"]


def test_a_missing_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="AmbiK file not found"):
        load_ambik(tmp_path / "AmbiK_data.csv")


def test_a_one_line_variant_list_is_the_intent_and_offers_no_readings(tmp_path: Path) -> None:
    items = load_ambik(write(tmp_path, [row(ambiguity_type="common_sense_knowledge", amb_shortlist="",
                                            user_intent="yolks, whites", variants="yolks, whites")])).items
    assert items[0].options == [] and items[0].intended == [] and items[0].intent_elements == ["yolks", "whites"]


def test_a_file_saved_with_a_byte_order_mark_reads_the_same(tmp_path: Path) -> None:
    path = write(tmp_path, [row()])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [i.id for i in load_ambik(path).items] == ["ambik-7/ambiguous", "ambik-7/unambiguous"]
