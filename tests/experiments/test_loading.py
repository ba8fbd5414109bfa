"""Checking experiment files: every problem one sentence at its line; a good file and the command line that
writes it make the same run."""

from pathlib import Path

import pytest

from lexicoord.experiments.loading import from_file, from_values, to_toml
from lexicoord.experiments.source import ExperimentError
from tests.cli.test_cli import lexicoord

GOOD = """protocol = "coordination"
name = "pilot"

[models]
leader = "scripted/first"
p1 = "sim:noisy:0.2"

[data]
items = 3

[settings]
clarification_bound = 2
"""

#: Malformed files as people write them: (file text, the line the problem is on, words the sentence must hold).
BAD = [
    ('protocol = "coordination"\n[models\nleader = "scripted/first"\n', 2, "not valid TOML"),
    ('protocol = "coordination"\nname = "pilot\n', 2, "not valid TOML"),
    ('protocol = "coordination"\nseed = 1\nseed = 2\n', 3, "not valid TOML"),
    ('protocol = "chess"\n', 1, "No protocol 'chess' is installed"),
    ('name = "x"\n', None, "protocol: required"),
    ('protocol = "coordination"\nconcurency = 4\n', 2, "concurency: unknown key"),
    ('protocol = "coordination"\nconcurrency = "lots"\n', 2, "concurrency: Input should be a valid integer"),
    ('protocol = "coordination"\nconcurrency = 0\n', 2, "greater than or equal to 1"),
    ('protocol = "coordination"\nname = "my run/1"\n', 2, "name:"),
    ('protocol = "coordination"\n[models]\nleader = "nosuch/model"\np = "sim:first"\n', 3, "Unknown provider 'nosuch'"),
    ('protocol = "coordination"\n[models]\nleader = "gpt-4o"\np = "sim:first"\n', 3, "neither provider/model"),
    ('protocol = "coordination"\n[models]\nleader = "human"\np = "sim:first"\n', 3, "no people at the keyboard"),
    ('protocol = "coordination"\n[models]\nonly = "sim:first"\n', 2, "at least two seats"),
    ('protocol = "coordination"\n[data]\nitems = -3\n', 3, "data.items"),
    ('protocol = "coordination"\n[data]\ndataset = "/no/such/items.jsonl"\n', 3, "no file or folder at /no/such/items.jsonl"),
    ('protocol = "coordination"\n[settings]\nclarification_bound = "three"\n', 3, "settings.clarification_bound"),
    ('protocol = "coordination"\n[settings]\nfailed_moves = "skip"\n', 3, "settings.failed_moves: Input should be"),
    ('protocol = "coordination"\n[grid]\nrepetitions = 0\n', 3, "grid.repetitions"),
    ('protocol = "coordination"\n[grid]\nvariants = ["a"]\n', 3, "grid.variants: unknown key"),
    ('protocol = "cogent"\n[grid]\nvariants = ["single", "debate"]\n', 3, "grid.variants.1: Input should be"),
    ('protocol = "cogent"\n[settings]\ntask = "gsm8k"\n', 2, "'task' is set in data.task"),
    ('protocol = "werewolf"\n[settings]\nexile_rule = "unanimous"\n', 3, "settings.exile_rule"),
    ('protocol = "debate"\n[models]\ndebaters = ["scripted/a", "scripted/a"]\n', 3, "named twice"),
    ('protocol = "coordination"\n[models]\nleader = "${NOT_SET_ANYWHERE}"\np = "sim:first"\n', 3,
     "NOT_SET_ANYWHERE is not set"),
    ('protocol = "coordination"\n[prices."openai/gpt-4o"]\nprompt = -1\ncompletion = 1\n', 3, "prices.openai/gpt-4o.prompt"),
]


@pytest.mark.parametrize("text, line, words", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_each_bad_file_gives_one_sentence_at_its_line(tmp_path: Path, text: str, line: int | None, words: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ExperimentError) as caught:
        loaded = from_file(path, environ={})
        loaded.campaign()
    problems = caught.value.problems
    assert len(problems) == 1, [str(p) for p in problems]
    [problem] = problems
    assert problem.where == (f"{path}:{line}" if line else str(path)), str(problem)
    assert words in problem.text, str(problem)
    assert "\n" not in str(problem) and "Traceback" not in str(problem)


def test_every_problem_of_a_file_is_told_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('protocol = "coordination"\ncolour = 3\n[models]\nleader = "nosuch/m"\np = "sim:psychic"\n'
                    '[data]\nitems = 0\n')
    with pytest.raises(ExperimentError) as caught:
        from_file(path)
    assert [p.where.rsplit(":", 1)[1] for p in caught.value.problems] == ["2", "4", "5", "7"]


def test_a_bad_override_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(GOOD)
    with pytest.raises(ExperimentError) as caught:
        from_file(path, ["data.items=none", "settings.clarification_bound=2"])
    [problem] = caught.value.problems
    assert problem.where == "--set data.items=none" and "data.items" in problem.text


def test_the_command_runs_nothing_for_a_bad_file_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('protocol = "coordination"\ncolour = 3\n[data]\nitems = 0\n')
    db = tmp_path / "runs.db"
    result = lexicoord("run", str(path), "--db", str(db), check=False)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {path}:2: colour: unknown key.",
                                          f"error: {path}:4: data.items: Input should be greater than or equal to 1."]
    assert not db.exists(), "nothing was opened, let alone run"
    missing = lexicoord("run", str(tmp_path / "none.toml"), check=False)
    assert missing.returncode != 0 and "none.toml" in missing.stderr


def test_a_file_and_the_command_line_that_writes_it_make_the_same_run(tmp_path: Path) -> None:
    values = {"protocol": "coordination", "name": None, "seed": 3, "concurrency": 2, "cache": True,
              "models": {"lead": "scripted/first", "p": "sim:noisy:0.25"},
              "data": {"dataset": "builtin", "items": 4, "sample": 9, "category": None},
              "settings": {"clarification_bound": 1, "leader_clarifies": True, "temperature": 0.2},
              "grid": {"repetitions": 2}, "options": {}}
    from_flags = from_values(values)
    path = tmp_path / "e.toml"
    path.write_text(to_toml(values))
    from_disk = from_file(path)
    a, b = from_flags.campaign(), from_disk.campaign()
    assert [e.key for e in a.episodes] == [e.key for e in b.episodes] and len(a.episodes) == 8
    assert a.config == b.config


def test_smoke_applies_the_files_smoke_table_before_the_command_lines_overrides(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(GOOD + '\n[smoke]\n"data.items" = 1\n"settings.clarification_bound" = 0\n')
    assert len(from_file(path, smoke=True).campaign().episodes) == 1
    assert len(from_file(path, ["data.items=2"], smoke=True).campaign().episodes) == 2
    assert len(from_file(path).campaign().episodes) == 3
    path.write_text(GOOD)
    with pytest.raises(ExperimentError, match=r"--smoke needs the file's \[smoke\] table"):
        from_file(path, smoke=True)
