import json
import re
from pathlib import Path

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import DatasetError
from lexicoord.tasks.coarsewsd import gloss, glosses, load_coarsewsd
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
    ("seal", "seal_seal", "seal (the Wikipedia article Seal)"),  # titled by the bare word: that article
    ("seal", "seal_pinniped", "seal (pinniped)"),  # titled without the word
    ("seal", "pinniped", "seal (pinniped)"),  # no word prefix at all
    ("seal", "seal_seal_(musician)", "seal (musician)"),
    ("port", "port_port_wine", "port wine"),
    ("port", "port_harbour", "port (harbour)"),
    ("chair", "chair_chairman", "chair (chairman)"),  # the word inside another word is not the word
    ("bank", "bank_bank", "bank (the Wikipedia article Bank)"),  # no word has a hand-written gloss of its own
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
    assert len(full) > 400 and {i.intended for i in full} == {
        "bank (the Wikipedia article Bank, not the geography sense)", "bank (geography)"}


#: Every class map of the shared CoarseWSD-20 copy with a label that is the bare word, as the files spell them,
#: and the gloss the one rule gives it: the article the label stands for, set against the word's other senses.
BARE = [
    ("apple", {"0": "apple_apple_inc.", "1": "apple_apple"},
     "apple (the Wikipedia article Apple, not the apple inc. sense)"),
    ("arm", {"0": "arm_arm_architecture", "1": "arm_arm"},
     "arm (the Wikipedia article Arm, not the arm architecture sense)"),
    ("bank", {"0": "bank_bank", "1": "bank_bank_(geography)"},
     "bank (the Wikipedia article Bank, not the geography sense)"),
    ("chair", {"0": "chair_chairman", "1": "chair_chair"},
     "chair (the Wikipedia article Chair, not the chairman sense)"),
    ("club", {"0": "club_club", "1": "club_nightclub", "2": "club_club_(weapon)"},
     "club (the Wikipedia article Club, not the nightclub or weapon senses)"),
    ("java", {"0": "java_java", "1": "java_java_(programming_language)"},
     "java (the Wikipedia article Java, not the programming language sense)"),
    ("pitcher", {"0": "pitcher_pitcher", "1": "pitcher_pitcher_(container)"},
     "pitcher (the Wikipedia article Pitcher, not the container sense)"),
]


@pytest.mark.parametrize("word, classes, expected", BARE, ids=[b[0] for b in BARE])
def test_a_label_that_is_the_bare_word_names_its_article_against_the_other_senses(word, classes, expected) -> None:
    labels = [classes[k] for k in sorted(classes, key=int)]
    made = glosses(word, labels)
    bare = labels.index(f"{word}_{word}")
    assert made[bare] == expected
    assert "main sense" not in made[bare]
    assert [g for i, g in enumerate(made) if i != bare] == [gloss(word, x) for i, x in enumerate(labels) if i != bare], \
        "the other senses keep their own glosses"


@pytest.mark.parametrize("word, labels, expected", [
    # Labels as other copies of the data might spell them: cased, prefix missing, doubled underscores.
    ("Java", ["Java_Java", "Java_Java_(programming_language)"],
     "Java (the Wikipedia article Java, not the programming language sense)"),
    ("java", ["java", "java_(programming_language)"],
     "java (the Wikipedia article Java, not the programming language sense)"),
    ("mole", ["mole_mole", "mole_mole_(animal)", "mole_mole_(unit)", "mole_mole_sauce"],
     "mole (the Wikipedia article Mole, not the animal, unit or mole sauce senses)"),
    ("port", ["port__port", "port_port_wine"], "port (the Wikipedia article Port, not the port wine sense)"),
])
def test_the_bare_word_rule_reads_labels_as_people_write_them(word, labels, expected) -> None:
    assert glosses(word, labels)[0] == expected


def test_a_long_contrast_still_fits_an_option() -> None:
    others = [f"bank_bank_({'x' * 30}{i})" for i in range(4)]
    made = glosses("bank", ["bank_bank", *others])
    assert len(made[0]) <= 120 and made[0].startswith("bank (the Wikipedia article Bank")
    assert len(set(made)) == len(made)


def test_the_shared_copy_glosses_every_bare_word_by_its_article() -> None:
    items = load_coarsewsd(SHARED, per_word=400)
    bare = {i.id.split("-")[0]: i.options for i in items}
    assert not any("main sense" in o for options in bare.values() for o in options)
    java = [i for i in items if i.id.startswith("java-")]
    assert {i.intended for i in java} == {"java (the Wikipedia article Java, not the programming language sense)",
                                          "java (programming language)"}
