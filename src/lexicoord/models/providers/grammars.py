"""A reply's JSON schema as a llama.cpp grammar, converted once per schema.

Passed as ``response_format``, llama-cpp-python converts the schema again on every call; its converter's
objects form reference cycles, so each call left garbage that only a full collection freed, and a protocol asks
for the same few schemas (a vote's choices, a guess) thousands of times. The conversion is the library's own, with
its fallback: a schema it cannot convert constrains the reply to any JSON.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any


def grammar_for(schema: dict[str, Any]) -> Any:
    """The ``LlamaGrammar`` for ``schema``: a grammar is only its text, so one serves every context and thread.

    Keyed by the schema as written, keys unsorted: the order of its properties is the order the reply writes them.
    """
    return _converted(json.dumps(schema))


@lru_cache(maxsize=256)
def _converted(schema_json: str) -> Any:
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(schema_json, verbose=False)
    except Exception:  # noqa: BLE001 - as llama-cpp-python's response_format does: any JSON then
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
