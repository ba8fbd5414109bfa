"""Getting JSON out of models that may or may not be able to give it.

Constrained backends return valid JSON; free-text backends (and small models
behind servers without ``response_format``) wrap it in prose or code fences, or
answer a closed question with the bare option. These helpers recover what can
be recovered and otherwise say precisely what was wrong, so a caller can record
the raw text together with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from lexicoord.errors import ConfigError
from lexicoord.models.types import ChatMessage, GenerateConfig

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_decoder = json.JSONDecoder()


@lru_cache(maxsize=1024)
def _choice_schema(choices: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": list(choices)}},
        "required": ["choice"],
        "additionalProperties": False,
    }


def choice_schema(choices: Sequence[str]) -> dict[str, Any]:
    """The schema for "pick one of these": an object, because OpenAI requires one at top level."""
    return _choice_schema(tuple(choices))


def requested_schema(config: GenerateConfig) -> dict[str, Any] | None:
    """The schema a call asks for, from ``json_schema`` or from ``choices``."""
    if config.json_schema is not None:
        return config.json_schema
    if config.choices is not None:
        return choice_schema(config.choices)
    return None


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    """Checking a schema costs milliseconds; protocols reuse a few schemas thousands of times."""
    schema = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ConfigError(f"The JSON schema given for the call is invalid: {exc.message}.") from None
    return Draft202012Validator(schema)


_by_identity: dict[int, tuple[dict[str, Any], Draft202012Validator]] = {}


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """The validator for ``schema``; the same dict object is looked up without re-serialising it."""
    hit = _by_identity.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    found = _validator(json.dumps(schema, sort_keys=True))
    if len(_by_identity) > 1024:
        _by_identity.clear()
    _by_identity[id(schema)] = (schema, found)  # holding the dict keeps its id from being reused
    return found


def check_schema(schema: dict[str, Any]) -> None:
    validator(schema)


def schema_instruction(schema: dict[str, Any]) -> str:
    """A plain-language request for JSON, for backends that cannot constrain decoding."""
    return (
        "Reply with a single JSON value and nothing else. It must validate against this "
        f"JSON schema:\n{json.dumps(schema, ensure_ascii=False)}"
    )


def with_schema_instruction(
    messages: Sequence[ChatMessage], schema: dict[str, Any]
) -> list[ChatMessage]:
    """Append the instruction to the system message (or add one)."""
    note = schema_instruction(schema)
    out = list(messages)
    if out and out[0].role == "system":
        out[0] = ChatMessage(role="system", content=f"{out[0].content}\n\n{note}")
    else:
        out.insert(0, ChatMessage(role="system", content=note))
    return out


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``; raises ``ValueError`` if there is none."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            continue
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = _decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError("no JSON object found in the reply")


def _norm(s: str) -> str:
    return re.sub(r"[^\w]+", " ", s.lower()).strip()


def match_choice(text: str, choices: Sequence[str]) -> str | None:
    """Read a bare answer to a closed question: exact option, or the one option named in it."""
    target = _norm(text)
    normed = {c: _norm(c) for c in choices}
    for choice, n in normed.items():
        if n == target:
            return choice
    found = [c for c, n in normed.items() if n and re.search(rf"\b{re.escape(n)}\b", target)]
    # Drop options that are only found because a longer found option contains them.
    found = [c for c in found if not any(c != o and normed[c] in normed[o] for o in found)]
    return found[0] if len(found) == 1 else None


def parse_reply(text: str, config: GenerateConfig) -> tuple[Any, str | None, str | None]:
    """``(parsed, choice, error)`` for a reply under the call's schema or choices.

    ``parsed`` is set only when the reply validates; otherwise ``error`` says why
    (the caller keeps the raw text). A ``json_schema`` takes precedence over ``choices``.
    """
    schema = requested_schema(config)
    if schema is None:
        return None, None, None
    closed = config.json_schema is None and config.choices is not None
    error: str | None
    try:
        value = extract_json(text)
    except ValueError as exc:
        value, error = None, str(exc)
    else:
        error = None
    if closed:
        assert config.choices is not None
        if isinstance(value, str):
            value = {"choice": value}
        if isinstance(value, dict) and set(value) == {"choice"} and value["choice"] in config.choices:
            return value, value["choice"], None  # the common case, checked without the validator
        # A bare option name, including one that reads as JSON ("2", "true").
        choice = match_choice(text, config.choices)
        if choice is not None:
            return {"choice": choice}, choice, None
        if error is not None:
            return None, None, error
    elif error is not None:
        return None, None, error
    errors = sorted(validator(schema).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(top level)"
        return None, None, f"reply does not match the schema at {where}: {errors[0].message}"
    return value, None, None
