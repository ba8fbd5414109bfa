import json
import re
from pathlib import Path

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import DatasetError
from lexicoord.tasks.coarsewsd import gloss, load_coarsewsd
from tests.conftest import SHARED_DATA

SHARED = SHARED_DATA / "coarsewsd20"


def make_word(root: Path, word: str, classes: dict, rows: list[tuple[str, str]]) -> None:
    folder = root / word
    folder.mkdir(parents=True)
    (folder / "classes_map.txt").write_text(json.dumps(classes))
    (folder / "test.data.txt").write_text("\n".join(r[0] for r in rows))
    (folder / "test.gold.txt").write_text("\n".join(r[1] for r in rows))


def test_glosses_are_readable() -> None:
    assert gloss("bank", "bank_bank_(geography)") == "bank (geography)"
    assert gloss("bass", "bass_double_bass") == "double bass"
    assert gloss("hood", "hood_hood_(vehicle)") == "hood (vehicle)"


@pytest.mark.parametrize("word, label, expected", [
    ("seal", "seal_seal", "seal (main sense)"),  # titled by the bare word
    ("seal", "seal_pinniped", "seal (pinniped)"),  # titled without the word
    ("seal", "pinniped", "seal (pinniped)"),  # no word prefix at all
    ("seal", "seal_seal_(musician)", "seal (musician)"),
    ("port", "port_port_wine", "port wine"),
    ("port", "port_harbour", "port (harbour)"),
    ("chair", "chair_chairman", "chair (chairman)"),  # the word inside another word is not the word
    ("bank", "bank_bank", "bank (main sense)"),  # no word has a hand-written gloss of its own
])
def test_every_word_follows_one_gloss_rule(word, label, expected) -> None:
    assert gloss(word, label) == expected


def test_every_gloss_of_made_up_labels_names_its_word() -> None:
    words = ["quill", "tamarind", "ferrule", "vole"]
    titles = ["{w}", "{w}_(botany)", "songbird", "big_{w}", "{w}s_and_more", "x", "{w}_{w}"]
    for w in words:
        glosses = [gloss(w, f"{w}_{t.format(w=w)}") for t in titles]
        for g in glosses:
            assert re.search(rf"\b{w}\b", g), (w, g)
        assert len(set(glosses)) == len(glosses), "distinct labels stay distinct options"


def test_format_and_bad_lines(tmp_path) -> None:
    make_word(tmp_path, "crane", {"0": "crane_crane_(machine)", "1": "crane_crane_(bird)"},
              [("1\tthe crane lifted steel", "0"), ("2\ta white crane flew", "1")])
    items = load_coarsewsd(tmp_path)
    assert [(i.word, i.intended, i.options) for i in items] == [
        ("crane", "crane (machine)", ["crane (machine)", "crane (bird)"]),
        ("crane", "crane (bird)", ["crane (machine)", "crane (bird)"]),
    ]
    make_word(tmp_path / "bad", "mole", {"0": "mole_mole_(animal)", "1": "mole_mole_(unit)"},
              [("1\tthe mole dug", "0"), ("9\ttoo short", "1"), ("1\tthe mole dug", "7")])
    with pytest.raises(DatasetError, match="2 bad line"):
        load_coarsewsd(tmp_path / "bad")
    with pytest.raises(ConfigError, match="no folder for: bat"):
        load_coarsewsd(tmp_path, words=["bat"])
    with pytest.raises(ConfigError, match="not found"):
        load_coarsewsd(tmp_path / "nowhere")


def test_the_shared_copy_of_the_test_split_loads() -> None:
    if not SHARED.is_dir():
        pytest.fail(f"CoarseWSD-20 test split expected at {SHARED} (see shared/data/README.md)")
    items = load_coarsewsd(SHARED, per_word=20)
    words = {i.id.split("-")[0] for i in items}
    assert len(words) == 14 and len(items) == 14 * 20
    assert all(i.intended in i.options and i.category == "wsd" for i in items)
    full = load_coarsewsd(SHARED, words=["bank"])
    assert len(full) > 400 and {i.intended for i in full} == {"bank (main sense)", "bank (geography)"}
