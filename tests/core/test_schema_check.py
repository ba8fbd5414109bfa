"""A request's schema is checked against its metaschema once, not with every answer, and answers are judged
exactly as ``jsonschema.validate`` judges them."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from jsonschema.validators import Draft7Validator, Draft202012Validator

from lexicoord.core import schema_check
from lexicoord.core.schema_check import first_error, schema_validator
from lexicoord.core.seat import Request

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": ["a river bank", "a money bank"]},
                   "justification": {"type": "string", "minLength": 1, "maxLength": 20}},
    "required": ["choice", "justification"],
    "additionalProperties": False,
}
VALUES: list[Any] = [
    {"choice": "a river bank", "justification": "water"},
    {"choice": "a sofa", "justification": "why not"},
    {"choice": "a money bank", "justification": "x" * 21},
    {"choice": "a money bank", "justification": ""},
    {"choice": "a money bank"},
    {"choice": "a money bank", "justification": "ok", "extra": 1},
    "just text",
    {"choice": 3, "justification": ["not", "text"]},
]


def described(error: jsonschema.ValidationError | None) -> tuple[Any, ...] | None:
    if error is None:
        return None
    return error.message, list(error.absolute_path), error.validator, error.validator_value


@pytest.mark.parametrize("value", VALUES)
def test_each_answer_gets_the_error_jsonschema_validate_gives(value: Any) -> None:
    try:
        jsonschema.validate(value, SCHEMA)
        expected = None
    except jsonschema.ValidationError as exc:
        expected = exc
    assert described(first_error(value, SCHEMA)) == described(expected)


def test_a_schema_is_checked_once_however_many_answers_and_requests_use_it(monkeypatch: pytest.MonkeyPatch) -> None:
    schema_check._compiled.cache_clear()
    checked: list[Any] = []
    real = Draft202012Validator.check_schema

    def counting(schema: Any, *args: Any, **kwargs: Any) -> None:
        checked.append(schema)
        real(schema, *args, **kwargs)

    monkeypatch.setattr(Draft202012Validator, "check_schema", counting)
    for _ in range(3):  # a new request, and a new but equal schema dict, for every round
        request = Request(kind="choose", round=1, schema={**SCHEMA, "properties": dict(SCHEMA["properties"])})
        assert request.check(VALUES[0]) is None and request.check(VALUES[1]) is not None
    assert len(checked) == 1
    other = {**SCHEMA, "required": ["choice"]}
    assert first_error({"choice": "a river bank"}, other) is None and len(checked) == 2, "a different schema is its own"


def test_an_invalid_schema_is_refused_every_time() -> None:
    bad = {"type": "object", "properties": {"choice": {"type": "no such type"}}}
    for _ in range(2):
        with pytest.raises(jsonschema.SchemaError):
            first_error({"choice": "x"}, bad)


def test_the_draft_a_schema_names_is_the_one_used() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}
    assert isinstance(schema_validator(draft7), Draft7Validator)
    assert isinstance(schema_validator({"type": "string"}), Draft202012Validator)
