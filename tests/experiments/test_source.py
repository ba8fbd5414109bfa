"""Reading an experiment file: key lines, variables from the environment, overrides typed the way people type."""

from pathlib import Path

import pytest

from lexicoord.experiments.source import ExperimentError, apply_overrides, key_lines, parse_override, read

FILE = """# a comment
protocol = "cogent"   # trailing comment
name = "table-1"

[models]
a = "${MODEL_A:-openai/gpt-4o-mini}"
"b" = "${MODEL_B}"

[settings]
rounds = 3
  passes = 2

[[published]]
source = "Table 1"
cell.variant = "cogent"

[[published]]
source = "Table 2"

[grid]
variants = [
  "single",
  "cogent",
]
"""


def test_every_key_and_table_has_its_line() -> None:
    lines = key_lines(FILE)
    assert lines[("protocol",)] == 2 and lines[("name",)] == 3
    assert lines[("models",)] == 5 and lines[("models", "a")] == 6 and lines[("models", "b")] == 7
    assert lines[("settings", "passes")] == 11, "an indented key is still a key"
    assert lines[("published", 0, "cell", "variant")] == 15, "a dotted key in the first of an array of tables"
    assert lines[("published", 1, "source")] == 18
    assert lines[("grid", "variants")] == 21
    assert ("single",) not in lines and ("grid", "single") not in lines, "array items are not keys"


def test_variables_are_filled_from_the_environment_or_their_default(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(FILE)
    source = read(path, environ={"MODEL_B": "vllm/Qwen/Qwen2.5-7B-Instruct"})
    assert source.data["models"] == {"a": "openai/gpt-4o-mini", "b": "vllm/Qwen/Qwen2.5-7B-Instruct"}
    assert read(path, environ={"MODEL_A": "groq/llama-3.1-8b-instant", "MODEL_B": "x/y"}).data["models"]["a"] == \
        "groq/llama-3.1-8b-instant"
    # Set but empty counts as unset, as in a shell's ${VAR:-default}.
    assert read(path, environ={"MODEL_A": "", "MODEL_B": "x/y"}).data["models"]["a"] == "openai/gpt-4o-mini"


def test_an_unset_variable_without_default_is_a_problem_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(FILE)
    source = read(path, environ={})
    [problem] = source.problems
    assert problem.where == f"{path}:7" and "MODEL_B is not set" in problem.text and "${MODEL_B:-default}" in problem.text


def test_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text('protocol = "x"\n[models\na = 1\n')
    with pytest.raises(ExperimentError) as caught:
        read(path)
    assert str(caught.value).startswith(f"{path}:2: not valid TOML")


@pytest.mark.parametrize("text, key, value", [
    ("models.a=vllm/Qwen/Qwen2.5-7B-Instruct", ["models", "a"], "vllm/Qwen/Qwen2.5-7B-Instruct"),
    ("data.items=50", ["data", "items"], 50),
    ("settings.temperature=0.0", ["settings", "temperature"], 0.0),
    ("cache=false", ["cache"], False),
    ("grid.variants=[\"single\", \"cogent\"]", ["grid", "variants"], ["single", "cogent"]),
    ('name="with spaces"', ["name"], "with spaces"),
    ("name = padded ", ["name"], "padded"),
    ('models."b.c"=x/y', ["models", "b.c"], "x/y"),
    ("settings.tie=later", ["settings", "tie"], "later"),
    ("data.file=/data/gsm8k/test.jsonl", ["data", "file"], "/data/gsm8k/test.jsonl"),
])
def test_overrides_are_typed_as_toml_values_or_kept_as_text(text: str, key: list[str], value: object) -> None:
    assert parse_override(text) == (key, value)


@pytest.mark.parametrize("text", ["items", "=3", " = 3"])
def test_an_override_without_key_or_equals_is_refused(text: str) -> None:
    with pytest.raises(ExperimentError, match="an override is key.path=value"):
        parse_override(text)


def test_overrides_make_tables_and_name_themselves_in_problems(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(FILE)
    source = read(path, environ={"MODEL_B": "x/y"})
    apply_overrides(source, ["data.items=5", "models.a=local/smollm2-135m"])
    assert source.data["data"] == {"items": 5} and source.data["models"]["a"] == "local/smollm2-135m"
    assert source.where(("data", "items")) == "--set data.items=5"
    assert source.where(("settings", "rounds")) == f"{path}:10"
    with pytest.raises(ExperimentError, match="name is not a table"):
        apply_overrides(source, ["name.x=1"])
