"""The README is a short front page that opens with the two commands and links into the documentation site;
every link it holds leads somewhere, and the tests build the site strictly (a broken link fails them)."""

from __future__ import annotations

import re

import yaml

from tests.docs_pages import DOCS, ROOT, readme

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(text: str) -> list[str]:
    """Link targets that are files of this repository: no scheme, no bare anchor, the anchor dropped."""
    targets = [t.split("#", 1)[0] for t in LINK.findall(text)]
    return [t for t in targets if t and not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_every_relative_link_in_the_readme_resolves_to_a_file() -> None:
    links = relative_links(readme())
    assert len(links) >= 10, links  # the README is mostly links into docs/
    missing = [t for t in links if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_link_reader_finds_links_as_people_write_them() -> None:
    text = ("See [Models](docs/models.md), ![room](docs/screenshots/a.png), [x](docs/b.md#rules), "
            "[site](https://example.org/a.md), [top](#install) and [`docs/`](docs/).")
    assert relative_links(text) == ["docs/models.md", "docs/screenshots/a.png", "docs/b.md", "docs/"]


def test_the_readme_opens_with_the_two_commands() -> None:
    first_block = readme().split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[:2] for line in first_block] == [["make", "serve"], ["make", "test"]]


def test_the_readme_is_a_short_page() -> None:
    lines = readme().splitlines()
    assert len(lines) <= 120 and max(map(len, lines)) <= 300, (len(lines), max(map(len, lines)))


def nav_pages(entries: list) -> set[str]:
    found: set[str] = set()
    for entry in entries:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            found |= nav_pages(value) if isinstance(value, list) else {value}
    return found


def test_every_page_under_docs_is_in_the_sites_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert config["strict"] is True and pages and nav_pages(config["nav"]) == pages


def test_make_test_builds_the_site_strictly_after_the_type_check() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0].splitlines()
    build = [i for i, line in enumerate(recipe) if "mkdocs build" in line]
    mypy = [i for i, line in enumerate(recipe) if line.strip().endswith("/mypy")]
    assert build and mypy and build[0] > mypy[0], recipe
    command = recipe[build[0]].split()
    # --quiet hides the warnings that --strict counts, so a broken link would pass unseen
    assert "--strict" in command and not {"-q", "--quiet"} & set(command), command
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()


def test_every_protocol_page_says_what_was_chosen_where_the_paper_is_silent() -> None:
    for name in ("coordination", "debate", "cogent", "werewolf"):
        text = (DOCS / "protocols" / f"{name}.md").read_text(encoding="utf-8")
        assert text.startswith("# ") and re.search(r"paper (leaves open|is silent)", text), name


def test_the_changelog_holds_the_benchmark_history() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    benchmarks = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert "1,254 MB" in changelog and "1,254 MB" not in benchmarks
    assert "Before contexts" not in benchmarks and "60–65 tok/s" in changelog
    assert "|" not in benchmarks, "figures are sections, not table cells"
