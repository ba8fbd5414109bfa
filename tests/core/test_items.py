"""Each protocol says where its items come from; the server and studies load every protocol's sets through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lexicoord.core.items import load_items, parse_spec, source_of
from lexicoord.errors import ConfigError

SMOKE = Path(__file__).parents[2] / "experiments" / "smoke"


@pytest.mark.parametrize(("spec", "parsed"), [
    ("coordination=builtin", ("coordination", "builtin", "builtin")),
    (" coordination / plants = my items.jsonl ", ("coordination", "plants", "my items.jsonl")),
    ("coordination=wictsv:/data/wic-tsv", ("coordination", "wictsv:/data/wic-tsv", "wictsv:/data/wic-tsv")),
    ("cogent/gsm8k=/data/gsm8k/test.jsonl", ("cogent", "gsm8k", "/data/gsm8k/test.jsonl")),
    ("coordination/x=a=b.jsonl", ("coordination", "x", "a=b.jsonl")),
])
def test_a_set_is_written_protocol_name_and_where(spec: str, parsed: tuple[str, str, str]) -> None:
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["builtin", "coordination=", "=builtin", "/x=builtin", "  "])
def test_a_set_without_its_protocol_or_its_place_is_refused(spec: str) -> None:
    with pytest.raises(ConfigError, match="--items takes PROTOCOL=WHERE"):
        parse_spec(spec)


def test_each_offered_protocol_gets_its_sets_or_its_default() -> None:
    sets = load_items(["coordination", "cogent", "debate"], [f"cogent/gsm8k={SMOKE / 'gsm8k.jsonl'}"])
    assert list(sets) == ["coordination", "cogent"], "the debate's rooms draw no items from the server"
    assert list(sets["coordination"]) == ["builtin"] and len(sets["coordination"]["builtin"]) == 285
    assert list(sets["cogent"]) == ["gsm8k"] and sets["cogent"]["gsm8k"][0]["answer"]
    named = load_items(["coordination"], named={"coordination": {"study": "builtin"}})
    assert list(named["coordination"]) == ["study"], "a set the caller names replaces the default"
    assert load_items(["cogent"]) == {"cogent": {}}, "COGENT's default is none: its rooms' typed questions"


def test_the_protocols_item_sources_pick_their_rooms_setting() -> None:
    coordination, cogent = source_of("coordination"), source_of("cogent")
    assert coordination is not None and cogent is not None and source_of("debate") is None
    assert coordination.study_settings("study") == {"dataset": "study", "mode": "automatic"}
    assert cogent.study_settings("mmlu") == {"source": "mmlu"}
    with pytest.raises(ConfigError, match="no file or folder|Cannot read|No such file"):
        load_items(["coordination"], ["coordination/x=/no/such.jsonl"])
