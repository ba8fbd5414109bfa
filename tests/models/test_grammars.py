"""A reply's schema becomes a llama.cpp grammar once, its properties in the order the schema gives them."""

from __future__ import annotations

import itertools
import json

from llama_cpp.llama_grammar import JSON_GBNF

from lexicoord.models.providers.grammars import grammar_for
from lexicoord.models.structured import choice_schema

VOTE = {"type": "object", "properties": {"target": {"type": "string", "enum": ["Ana", "Bo", "abstain"]},
                                         "reason": {"type": "string"}}, "required": ["target"]}


def test_one_schema_asked_again_is_one_grammar_and_its_property_order_is_kept() -> None:
    again = json.loads(json.dumps(VOTE))  # equal, built anew, as each call builds its schema
    assert grammar_for(again) is grammar_for(VOTE)
    for order in itertools.permutations(["target", "reason"]):
        schema = {**VOTE, "properties": {name: VOTE["properties"][name] for name in order}, "required": list(order)}
        rule = next(line for line in grammar_for(schema)._grammar.splitlines() if line.startswith("root ::="))
        assert rule.index(order[0]) < rule.index(order[1]), rule


def test_the_grammar_admits_the_choices_and_nothing_else() -> None:
    text = grammar_for(choice_schema(("Ana", "Bo", "abstain")))._grammar
    for choice in ("Ana", "Bo", "abstain"):
        assert f'"\\"{choice}\\""' in text
    assert "Cy" not in text


def test_a_schema_the_converter_cannot_read_asks_for_any_json_as_the_library_does() -> None:
    unreadable = {"$ref": "#/definitions/nowhere"}
    assert grammar_for(unreadable)._grammar == JSON_GBNF
    assert grammar_for(VOTE)._grammar != JSON_GBNF
