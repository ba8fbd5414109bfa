"""A call's settings laid over a seat's over a model's: the later set field wins, an unset one never erases."""

from __future__ import annotations

import pytest

from lexicoord.models.types import GenerateConfig

CASES = [  # (under, over, overrides, expected fields)
    ({}, {"temperature": 0.7}, {}, {"temperature": 0.7}),
    ({"temperature": 0.2, "max_tokens": 64}, {"temperature": 0.7}, {}, {"temperature": 0.7, "max_tokens": 64}),
    ({"temperature": 0.2}, {}, {}, {"temperature": 0.2}),
    ({"temperature": 0.2}, {"seed": 3}, {"seed": 9}, {"temperature": 0.2, "seed": 9}),
    ({}, {"max_tokens": 10}, {"temperature": None}, {"max_tokens": 10}),  # an override of None changes nothing
    ({"stop": ("\n",)}, {"choices": ("A", "B")}, {"max_tokens": 1}, {"stop": ("\n",), "choices": ("A", "B"),
                                                                    "max_tokens": 1}),
]


@pytest.mark.parametrize(("under", "over", "overrides", "expected"), CASES)
def test_set_fields_win_and_unset_ones_never_erase(under: dict, over: dict, overrides: dict, expected: dict) -> None:
    got = GenerateConfig(**under).merged(GenerateConfig(**over), **overrides)
    assert {k: v for k, v in got.model_dump().items() if v is not None} == expected


def test_nothing_under_or_over_gives_the_same_config_back() -> None:
    call, empty = GenerateConfig(temperature=0.5), GenerateConfig()
    assert empty.merged(call) is call and call.merged(None) is call and call.merged(empty) == call


def test_an_override_is_validated_as_the_field_is() -> None:
    with pytest.raises(ValueError):
        GenerateConfig().merged(None, logprobs=50)
