"""A reply's schema becomes a llama.cpp grammar once, whatever order its keys come in."""

from __future__ import annotations

import itertools

from llama_cpp.llama_grammar import JSON_GBNF

from lexicoord.models.providers.grammars import grammar_for
from lexicoord.models.structured import choice_schema

VOTE = {"type": "object", "properties": {"target": {"type": "string", "enum": ["Ana", "Bo", "abstain"]},
                                         "reason": {"type": "string"}}, "required": ["target"]}


def test_one_schema_in_any_key_order_is_one_grammar() -> None:
    grammars = {id(grammar_for(dict(order))) for order in itertools.permutations(VOTE.items())}
    assert len(grammars) == 1


def test_the_grammar_admits_the_choices_and_nothing_else() -> None:
    text = grammar_for(choice_schema(("Ana", "Bo", "abstain")))._grammar
    for choice in ("Ana", "Bo", "abstain"):
        assert f'"\\"{choice}\\""' in text
    assert "Cy" not in text


def test_a_schema_the_converter_cannot_read_asks_for_any_json_as_the_library_does() -> None:
    unreadable = {"$ref": "#/definitions/nowhere"}
    assert grammar_for(unreadable)._grammar == JSON_GBNF
    assert grammar_for(VOTE)._grammar != JSON_GBNF
