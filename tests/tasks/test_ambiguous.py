import json
from collections import Counter

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import DatasetError, builtin_items, load_jsonl, word_span

GOOD = {"id": "x1", "sentence": "Meet me at the bank.", "word": "bank", "options": ["river side", "money place"],
        "intended": "river side", "open": False}


def test_builtin_dataset_is_valid_and_covers_what_it_promises() -> None:
    items = builtin_items()
    assert len(items) >= 200
    counts = Counter(i.category for i in items)
    assert counts["homonym"] >= 60 and counts["polysemy"] >= 50 and counts["domain"] >= 60
    words = {i.word.lower() for i in items}
    for needed in ("bank", "bat", "pitcher", "paper", "run", "light", "release", "hold", "secure",
                   "clear the area", "stop at the line"):
        assert needed in words, needed
    assert 0.1 < sum(i.open for i in items) / len(items) < 0.4
    assert all(2 <= len(i.options) <= 5 and word_span(i.sentence, i.word) for i in items)
    assert len({i.sentence.lower() for i in items}) == len(items), "no repeated sentence"


def test_bad_lines_are_each_reported_with_number_and_reason(tmp_path) -> None:
    lines = [
        json.dumps(GOOD),
        "{not json",
        json.dumps({**GOOD, "id": "x2", "word": "river"}),
        json.dumps({**GOOD, "id": "x3", "options": ["only one"]}),
        json.dumps({**GOOD, "id": "x4", "intended": "elsewhere"}),
        json.dumps({**GOOD, "id": "x5", "intended": None, "open": False}),
        json.dumps(GOOD),
        "[1, 2]",
        "",
        json.dumps({**GOOD, "id": "x6", "colour": "red"}),
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(DatasetError) as info:
        load_jsonl(path)
    reasons = {e.line: e.reason for e in info.value.errors}
    assert set(reasons) == {2, 3, 4, 5, 6, 7, 8, 10}
    assert "not valid JSON" in reasons[2]
    assert "'river' does not occur in the sentence" in reasons[3]
    assert "options" in reasons[4]
    assert "not one of the options" in reasons[5]
    assert "'open' must be true exactly when" in reasons[6]
    assert "repeats line 1" in reasons[7]
    assert "not a JSON object" in reasons[8]
    assert "colour" in reasons[10]
    assert "8 bad line(s)" in str(info.value) and "line 2:" in str(info.value)
    items, errors = load_jsonl(path, keep_going=True)
    assert [i.id for i in items] == ["x1"] and len(errors) == 8


def test_missing_or_empty_files_are_clear(tmp_path) -> None:
    with pytest.raises(ConfigError, match="Cannot read the dataset"):
        load_jsonl(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(ConfigError, match="holds no items"):
        load_jsonl(tmp_path / "empty.jsonl")


def test_multiword_targets_match_at_word_boundaries() -> None:
    assert word_span("Please clear the area now.", "clear the area") == (7, 21)
    assert word_span("The banker left.", "bank") is None
    assert word_span("BANK closed.", "bank") == (0, 4)


def test_blank_words_control_characters_and_encodings(tmp_path) -> None:
    lines = [
        json.dumps({**GOOD, "id": "w", "word": " "}),
        json.dumps({**GOOD, "id": "n", "options": ["river side", "money\n- injected"]}),
        json.dumps({**GOOD, "id": "s", "intended": " river side "}),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines))
    items, errors = load_jsonl(path, keep_going=True)
    assert [i.id for i in items] == ["s"] and items[0].intended == "river side"
    assert {e.line for e in errors} == {1, 2}
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps({**GOOD, "sentence": "Meet me at the bank café."}, ensure_ascii=False).encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_jsonl(latin)
