"""Use detection: whole words and phrases, case-insensitive, the longest term claiming its span first."""

from lexicoord.lexicon import Provenance, find_uses
from lexicoord.lexicon.board import Entry


def entry(term: str, agent: str = "A") -> Entry:
    return Entry(term=term, definition="d", provenance=Provenance(agent=agent))


def counts(text: str, *terms: str) -> dict[str, int]:
    return {u.term: u.count for u in find_uses(text, [entry(t) for t in terms])}


def test_a_longer_term_claims_its_words() -> None:
    assert counts("The core lock holds; the core is safe.", "core", "core lock") == {"core lock": 1, "core": 1}
    assert counts("core lock, Core  Lock", "core", "core lock") == {"core lock": 2}


def test_whole_words_only() -> None:
    assert counts("P10 voted; then P1 and P1.", "P1", "P10") == {"P10": 1, "P1": 2}
    assert counts("unitcosts and preunitcost", "unitcost") == {}
    assert counts("UNITCOST, unitcost.", "unitcost") == {"unitcost": 2}


def test_a_use_names_whose_term_it_was() -> None:
    [use] = find_uses("we keep the pressure pool", [entry("pressure pool", agent="B")])
    assert (use.term, use.coiner, use.count) == ("pressure pool", "B", 1)
