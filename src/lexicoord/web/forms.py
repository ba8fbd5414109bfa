"""A protocol's room settings as form fields, so the start page offers every protocol without code of its own.

The fields are read from the adapter's settings model (the fields it adds to
:class:`~lexicoord.web.settings.RoomSettings`): a closed set is a choice, a
boolean a checkbox, a bounded number a number input. Values the operator decides
(the datasets on offer, say) come from the adapter's ``choices``, never from the
browser. Whatever the page sends is checked again against the same model.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt, MaxLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from lexicoord.web.settings import RoomSettings

Kind = Literal["choice", "bool", "int", "number", "text"]


class FormField(BaseModel):
    name: str
    label: str
    kind: Kind
    default: Any = None
    choices: list[Any] = []
    min: float | None = None
    max: float | None = None
    max_length: int | None = None


class ProtocolOffer(BaseModel):
    """One protocol people may open rooms for, with the fields its room asks for."""

    name: str
    #: What a person reads in the start page's list (``name`` is the id the server is sent back).
    title: str
    summary: str
    fields: list[FormField]


def _bounds(info: FieldInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in info.metadata:
        if isinstance(m, (Ge, Gt)):
            out["min"] = m.ge if isinstance(m, Ge) else m.gt
        elif isinstance(m, (Le, Lt)):
            out["max"] = m.le if isinstance(m, Le) else m.lt
        elif isinstance(m, MaxLen):
            out["max_length"] = m.max_length
    return out


def _field(name: str, info: FieldInfo, choices: list[Any] | None) -> FormField | None:
    annotation = info.annotation
    label = info.description or name.replace("_", " ")
    default = info.get_default(call_default_factory=True)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):  # ``int | None`` and the like
        annotation = next((a for a in typing.get_args(annotation) if a is not type(None)), annotation)
    if choices is not None:
        return FormField(name=name, label=label, kind="choice", default=default if default in choices else
                         (choices[0] if choices else None), choices=choices)
    if typing.get_origin(annotation) is Literal:
        return FormField(name=name, label=label, kind="choice", default=default, choices=list(typing.get_args(annotation)))
    if annotation is bool:
        return FormField(name=name, label=label, kind="bool", default=default)
    if annotation is int:
        return FormField(name=name, label=label, kind="int", default=default, **_bounds(info))
    if annotation is float:
        return FormField(name=name, label=label, kind="number", default=default, **_bounds(info))
    if annotation is str:
        return FormField(name=name, label=label, kind="text", default=default, **_bounds(info))
    return None  # anything richer (lists, nested models) is not asked for on the start page


def protocol_fields(settings_model: type[RoomSettings], choices: dict[str, list[Any]]) -> list[FormField]:
    """The fields a protocol's room adds to every room's, as the start page shows them."""
    common = set(RoomSettings.model_fields)
    fields = (_field(n, i, choices.get(n)) for n, i in settings_model.model_fields.items() if n not in common)
    return [f for f in fields if f is not None]


class ServerOffer(BaseModel):
    """What people creating a room may pick from: only what the operator started the server with."""

    models: list[str]
    #: Each protocol on offer with its room's own fields.
    protocols: list[ProtocolOffer]
    #: The protocol the form starts on: the coordination game when it is offered, else the first.
    default_protocol: str | None = None
    default_agents: int = 2
