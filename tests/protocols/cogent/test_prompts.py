"""COGENT's page shows its prompt files as they are, so a reader of the page reads the prompts sent."""

import re
from importlib import resources

import pytest

from tests.docs_pages import page

PROMPTS = ("cogent_init", "cogent_name", "cogent_debate", "cogent_lexicon")


def cogent_section() -> str:
    return page("protocols/cogent.md")


@pytest.mark.parametrize("name", PROMPTS)
def test_the_page_shows_every_cogent_prompt_file_line_by_line(name: str) -> None:
    shown = re.findall(r"```text\n(.*?)```", cogent_section(), re.S)
    text = (resources.files("lexicoord") / "prompts" / f"{name}.txt").read_text(encoding="utf-8")
    assert text in shown, f"{name}.txt differs from the copy on COGENT's page"
    assert f"`{name}.txt`" in cogent_section()


def test_the_page_names_only_prompt_files_that_exist() -> None:
    named = set(re.findall(r"`(?:prompts/)?((?:cogent|term)_\w+)\.txt`", cogent_section()))
    folder = resources.files("lexicoord") / "prompts"
    assert named >= set(PROMPTS) and all((folder / f"{n}.txt").is_file() for n in named), named
