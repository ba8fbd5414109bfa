"""WiC-TSV as coordination items: the word's glosses are the options, the one marked T the meaning meant."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lexicoord.cli.app import app
from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import TASK
from lexicoord.tasks.asking import Skips
from lexicoord.tasks.jsonl import DatasetError
from lexicoord.tasks.wictsv import load_wictsv
from tests.conftest import shared_data


def folder(tmp_path: Path, rows: list[tuple[str, str, str]], split: str = "train") -> Path:
    """Rows of (example line, gloss, label) as WiC-TSV's aligned files."""
    (tmp_path / f"{split}_examples.txt").write_text("".join(r[0] + "\n" for r in rows), encoding="utf-8")
    (tmp_path / f"{split}_definitions.txt").write_text("".join(r[1] + "\n" for r in rows), encoding="utf-8")
    (tmp_path / f"{split}_labels.txt").write_text("".join(r[2] + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def test_the_shipped_training_split_gives_items_and_says_what_it_skipped() -> None:
    skips = Skips()
    items = load_wictsv(shared_data("wic-tsv"), skips=skips)
    assert len(items) == 903
    assert skips == {"contexts with no gloss marked T": 723, "contexts whose word has one gloss in the file": 481,
                     "contexts whose true gloss is longer than 120 characters": 24,
                     "contexts left with one gloss of at most 120 characters": 6}
    assert all(i.intended in i.options and 2 <= len(i.options) <= 5 for i in items)
    assert sum(i.options[0] == i.intended for i in items) < len(items)  # the meant gloss is not always first


def test_a_context_with_its_own_wrong_gloss_and_the_words_other_senses(tmp_path: Path) -> None:
    path = folder(tmp_path, [
        ("bank\t4\tShe sat on the bank and fished .", "sloping land beside a body of water", "T"),
        ("bank\t4\tShe sat on the bank and fished .", "a financial institution", "F"),
        ("Bank\t1\tThe bank raised its rates .", "a financial institution", "T"),
        ("bank\t0\tbank the fire before bed", "cover with ashes to control the rate of burning", "T"),
    ])
    items = load_wictsv(path)
    assert [i.word for i in items] == ["bank", "bank", "bank"]
    first = items[0]
    assert first.intended == "sloping land beside a body of water"
    assert set(first.options) == {"sloping land beside a body of water", "a financial institution",
                                  "cover with ashes to control the rate of burning"}
    assert items[1].intended == "a financial institution" and items[1].id == "wictsv-train-00003"


def test_an_index_off_the_word_falls_back_to_the_word_itself(tmp_path: Path) -> None:
    path = folder(tmp_path, [("Bank\t9\tThe bank raised its rates .", "a financial institution", "T"),
                             ("bank\t0\tbank the fire", "cover with ashes", "T")])
    assert [i.word for i in load_wictsv(path)] == ["Bank", "bank"]


def test_contexts_without_a_true_gloss_or_with_one_sense_are_skipped_and_counted(tmp_path: Path) -> None:
    path = folder(tmp_path, [
        ("seal\t1\tthe seal swam away", "a marine mammal", "F"),
        ("kiwi\t1\tthe kiwi ran off", "a flightless bird", "T"),
        ("seal\t1\ta seal on the letter", "a stamp on a document", "T"),
        ("seal\t1\ta seal on the letter", "a marine mammal", "T"),
    ])
    skips = Skips()
    assert load_wictsv(path, skips=skips) == []
    assert skips == {"contexts with no gloss marked T": 1, "contexts whose word has one gloss in the file": 1,
                     "contexts without exactly one gloss marked T": 1}


def test_messy_lines_labels_in_lower_case_and_extra_spaces(tmp_path: Path) -> None:
    path = folder(tmp_path, [
        ("spring\t3\tI spent my spring holidays in Morocco .", "  the season of growth ", " t"),
        ("spring\t1\tthe spring broke", "a metal elastic device", "T\r"),
    ])
    items = load_wictsv(path)
    assert items[0].intended == "the season of growth" and len(items) == 2


def test_bad_lines_are_reported_by_number(tmp_path: Path) -> None:
    path = folder(tmp_path, [
        ("spring\t3\tI spent my spring holidays .", "the season of growth", "T"),
        ("spring three I spent my spring holidays .", "a device", "T"),
        ("spring\t1\tthe spring broke", "a metal elastic device", "maybe"),
    ])
    with pytest.raises(DatasetError) as caught:
        load_wictsv(path)
    assert [e.line for e in caught.value.errors] == [2, 3]


def test_files_of_different_lengths_are_an_error(tmp_path: Path) -> None:
    path = folder(tmp_path, [("spring\t3\tI spent my spring holidays .", "the season of growth", "T")])
    (path / "train_labels.txt").write_text("T\nF\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="differ in length"):
        load_wictsv(path)


def test_a_folder_without_the_split_names_the_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="test_examples.txt"):
        load_wictsv(folder(tmp_path, []), split="test")


def test_the_coordination_game_reads_it_as_a_named_source() -> None:
    items = TASK.load(f"wictsv:{shared_data('wic-tsv')}")
    assert len(items) == 903


@pytest.mark.embedded
def test_coordination_run_plays_wictsv_items_on_the_embedded_model(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    result = CliRunner().invoke(app, ["coordination", "run", "--dataset", f"wictsv:{shared_data('wic-tsv')}",
                                      "--items", "2", "--agents", "2", "--bound", "0", "--db", db, "--run", "wic"])
    assert result.exit_code == 0, result.output
    shown = CliRunner().invoke(app, ["runs", "show", "wic", "--db", db])
    assert "2 done" in shown.output, shown.output


def test_a_coordination_run_says_what_the_loader_skipped() -> None:
    result = CliRunner().invoke(app, ["coordination", "run", "--dataset", f"wictsv:{shared_data('wic-tsv')}",
                                      "--items", "2", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "723 contexts with no gloss marked T" in " ".join(result.output.split())
