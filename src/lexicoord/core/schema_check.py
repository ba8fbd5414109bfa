"""Checking answers against a request's JSON schema without checking the schema itself every time.

``jsonschema.validate`` first validates the schema against its draft's metaschema, which costs far more than
checking a small answer: in a live room, where every vote is checked twice (by the room, so the person can
correct it, and by the seat), that metaschema walk was most of the event loop's time. Protocols reuse a few
schemas for thousands of requests, so each distinct schema is checked and compiled once, keyed by its
canonical JSON (the key stays right even if a caller builds the same schema afresh for every request).

jsonschema (and the referencing and rpds packages under it, 10 MB resident) is imported by the first check, not
with the seats that use it: reading a run's events for a report imports the seat module and checks nothing.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import exceptions
    from jsonschema.protocols import Validator

#: Distinct schemas kept compiled; a protocol's schemas differ by their options, so a busy server sees many.
CACHED_SCHEMAS = 4096


@lru_cache(maxsize=CACHED_SCHEMAS)
def _compiled(schema_json: str) -> Validator:
    """The validator for one schema, checked against its metaschema first (as ``jsonschema.validate`` does):
    an invalid schema raises :class:`jsonschema.SchemaError` and is not kept."""
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_validator(schema: dict[str, Any]) -> Validator:
    """The compiled validator of ``schema`` (the draft its ``$schema`` names, else the latest)."""
    return _compiled(json.dumps(schema, sort_keys=True, ensure_ascii=False))


def first_error(value: Any, schema: dict[str, Any]) -> exceptions.ValidationError | None:
    """The error ``jsonschema.validate`` would raise for ``value`` (its best match), or ``None`` if it is valid."""
    from jsonschema.exceptions import best_match

    error: exceptions.ValidationError | None = best_match(schema_validator(schema).iter_errors(value))
    return error
