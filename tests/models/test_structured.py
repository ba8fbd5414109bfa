import pytest

from lexicoord.errors import ConfigError
from lexicoord.models.structured import check_schema, extract_json, match_choice, parse_reply
from lexicoord.models.types import GenerateConfig

SCHEMA = {
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": ["a", "b"]}, "why": {"type": "string"}},
    "required": ["choice", "why"],
}


@pytest.mark.parametrize(
    "text",
    [
        '{"x": 1}',
        'Here you go: ```json\n{"x": 1}\n``` hope it helps',
        'Answer: {"x": 1} and then {"y": 2}',
        'noise { not json } then {"x": 1}',
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text) == {"x": 1}


def test_extract_json_fails_clearly() -> None:
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("I think it is the river one.")


def test_match_choice() -> None:
    options = ["river bank", "bank", "money"]
    assert match_choice("Money.", options) == "money"
    assert match_choice("I'd say the river bank", options) == "river bank"  # longer option wins over its part
    assert match_choice("river bank or money", options) is None  # two options named: no guess
    assert match_choice("neither", options) is None


def test_parse_reply_validates_against_schema() -> None:
    config = GenerateConfig(json_schema=SCHEMA)
    parsed, choice, error = parse_reply('{"choice": "a", "why": "because"}', config)
    assert parsed == {"choice": "a", "why": "because"} and error is None and choice is None
    parsed, _, error = parse_reply('{"choice": "c", "why": "x"}', config)
    assert parsed is None, "parsed is only set for a reply that validates"
    assert error is not None and "choice" in error and "'c' is not one of" in error
    _, _, error = parse_reply('{"choice": "a"}', config)
    assert error is not None and "'why' is a required property" in error


def test_parse_reply_choices_accepts_bare_answers() -> None:
    config = GenerateConfig(choices=("river", "money"))
    assert parse_reply('{"choice": "river"}', config)[1] == "river"
    assert parse_reply('"money"', config)[1] == "money"
    assert parse_reply("The answer is money.", config)[1] == "money"
    parsed, choice, error = parse_reply("no idea", config)
    assert parsed is None and choice is None and error == "no JSON object found in the reply"


def test_plain_calls_are_not_parsed() -> None:
    assert parse_reply('{"x": 1}', GenerateConfig()) == (None, None, None)


def test_invalid_schema_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="schema"):
        check_schema({"type": "objekt"})


def test_options_that_read_as_json_are_still_options() -> None:
    config = GenerateConfig(choices=("1", "2", "3"))
    assert parse_reply("2", config)[1] == "2"
    assert parse_reply("I pick [2]", config)[1] == "2"
    assert parse_reply("true", GenerateConfig(choices=("true", "false")))[1] == "true"
    parsed, choice, error = parse_reply('{"choice": "9"}', config)
    assert parsed is None and choice is None and "'9' is not one of" in error


def test_schema_wins_over_choices_and_never_crashes() -> None:
    config = GenerateConfig(json_schema=SCHEMA, choices=("a", "b"))
    assert parse_reply("[1, 2]", config)[2] is not None
    parsed, choice, error = parse_reply('{"choice": "a", "why": "w"}', config)
    assert parsed == {"choice": "a", "why": "w"} and error is None
