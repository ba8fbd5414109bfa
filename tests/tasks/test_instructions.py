"""Instruction files: generated pairs, a user's own instructions, and bad lines named by number."""

import json

import pytest

from lexicoord.tasks.instructions import generated_instructions, load_instructions, parse_instructions
from lexicoord.tasks.jsonl import DatasetError
from lexicoord.tasks.tabletop import SCENE, generate


def test_pairs_expand_to_both_twins_and_singles_load_as_they_are(tmp_path) -> None:
    pair = generate(1, seed=0)[0]
    own = {"id": "mine", "instruction": "Hand me the thing over there.", "ambiguous": True, "type": "attribute",
           "slot": {"name": "noun", "vague": "thing", "ask_about": "which object", "cues": ["which object"]}}
    path = tmp_path / "set.jsonl"
    path.write_text(pair.model_dump_json() + "\n\n" + json.dumps(own) + "\n", encoding="utf-8")
    items = load_instructions(path)
    assert [i.id for i in items] == [f"{pair.id}/ambiguous", f"{pair.id}/unambiguous", "mine"]
    assert items[0].instruction == pair.ambiguous and items[0].ambiguous and items[0].slot == pair.slot
    assert items[1].instruction == pair.unambiguous and not items[1].ambiguous and items[1].pair == pair.id
    assert items[2].context == SCENE, "the tabletop scene is the default context"
    assert [i.id for i in load_instructions(path, unambiguous=False)] == [f"{pair.id}/ambiguous", "mine"]


def test_every_bad_line_is_reported_with_its_number() -> None:
    lines = ['{"id": "a", "instruction": "Do it.", "ambiguous": "maybe"}', "not json", "[1, 2]",
             '{"id": "b", "ambiguous": true}',
             '{"id": "c", "instruction": "Put one red block into the red bowl.", "ambiguous": false,'
             ' "slot": {"name": "x", "vague": "y", "ask_about": "z", "cues": ["y"]}}',
             '{"id": "d", "instruction": "Put it down.", "ambiguous": true}',
             '{"id": "d", "instruction": "Put it up.", "ambiguous": true}']
    with pytest.raises(DatasetError) as info:
        parse_instructions(lines, "own.jsonl")
    reasons = {e.line: e.reason for e in info.value.errors}
    assert set(reasons) == {1, 2, 3, 4, 5, 7}
    assert "ambiguous" in reasons[1] and "not valid JSON" in reasons[2] and "not a JSON object" in reasons[3]
    assert "instruction" in reasons[4] and "no ambiguous slot" in reasons[5] and "repeats line 6" in reasons[7]
    assert "own.jsonl has 6 bad line(s)" in str(info.value)
    items, errors = parse_instructions(lines, "own.jsonl", keep_going=True)
    assert [i.id for i in items] == ["d"] and len(errors) == 6


def test_generated_instructions_are_the_generated_pairs_twinned() -> None:
    items = generated_instructions(2, seed=5)
    assert len(items) == 12 and sum(i.ambiguous for i in items) == 6
    assert {i.type for i in items} == {"numerical", "attribute", "spatial"}
