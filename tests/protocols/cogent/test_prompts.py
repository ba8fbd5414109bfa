"""COGENT's page shows its prompt files as they are, so a reader of the page reads the prompts sent."""

import re

import pytest

from lexicoord.prompting import Prompts
from tests.docs_pages import page

PROMPTS = ("cogent_init", "cogent_name", "cogent_debate", "cogent_lexicon")
#: Where each named file lives: COGENT's own beside its rules, the annotator's with the shared analysis.
FOLDERS = {"cogent": Prompts("lexicoord.protocols.cogent"), "term": Prompts("lexicoord")}


def cogent_section() -> str:
    return page("protocols/cogent.md")


@pytest.mark.parametrize("name", PROMPTS)
def test_the_page_shows_every_cogent_prompt_file_line_by_line(name: str) -> None:
    shown = re.findall(r"```text\n(.*?)```", cogent_section(), re.S)
    text = FOLDERS["cogent"].load(name)
    assert text in shown, f"{name}.txt differs from the copy on COGENT's page"
    assert f"`{name}.txt`" in cogent_section()


def test_the_page_names_only_prompt_files_that_exist() -> None:
    named = set(re.findall(r"`(?:prompts/)?((?:cogent|term)_\w+)\.txt`", cogent_section()))
    assert named >= set(PROMPTS) and all((FOLDERS[n.split("_")[0]].dirs()[-1] / f"{n}.txt").is_file() for n in named), named
