"""The papers' setups shipped in experiments/: each file is valid at full and smoke scale, and runs to its report,
with the paper's numbers beside the run's, on the embedded model and (a slice of it) on an OpenAI-compatible server on
loopback."""

from pathlib import Path

import pytest

from lexicoord.experiments.loading import from_file
from tests.cli.test_cli import lexicoord
from tests.conftest import SHARED_DATA

EXPERIMENTS = Path(__file__).parents[2] / "experiments"
FILES = sorted(EXPERIMENTS.glob("*.toml"))

#: Per file, the overrides that seat every model of its smoke run on the loopback server (``llamacpp/smollm2``).
ON_SERVER = {
    "lexicoord-campaign": [f"models.{seat}=llamacpp/smollm2" for seat in ("llama1", "llama2", "mistral1", "mistral2")],
    "debate-study": ['models.debaters=["llamacpp/smollm2"]'],
    "cogent-table1-gsm8k": ["models.a=llamacpp/smollm2"],
    "cogent-table1-folio": ["models.a=llamacpp/smollm2"],
    "cogent-table1-mmlu": ["models.a=llamacpp/smollm2"],
    "werewolf-cogent": ["models.villagers=llamacpp/smollm2"],
    # the conformal threshold was calibrated on the embedded model's weights, which the loopback server serves
    "gate-knowno": ['models.seats=["llamacpp/smollm2"]', "settings.calibrated_model=llamacpp/smollm2"],
    "gate-ambik": ['models.seats=["llamacpp/smollm2"]', "settings.calibrated_model=llamacpp/smollm2"],
}


#: Per file, the slice of its smoke run played on the loopback server. The embedded run plays the whole smoke grid;
#: the server adds the provider's path (chat, JSON schemas, log-probabilities for the conformal policy), which one
#: item of every policy, or the condition with the most model machinery, reaches.
SERVER_SLICE = {
    "lexicoord-campaign": ["data.items=1"],
    "debate-study": [],
    "cogent-table1-gsm8k": ['grid.variants=["cogent"]'],
    "cogent-table1-folio": ['grid.variants=["cogent"]'],
    "cogent-table1-mmlu": ['grid.variants=["cogent"]'],
    "werewolf-cogent": ['grid.conditions=["cogent"]'],
    "gate-knowno": ["data.items=1"],
    "gate-ambik": ["data.items=1"],
}


#: Files whose paper's numbers could not be read from the paper itself: they carry none rather than guessed ones.
NO_PUBLISHED = {"gate-ambik"}


def test_the_papers_setups_are_all_shipped() -> None:
    assert {f.stem for f in FILES} == set(ON_SERVER) == set(SERVER_SLICE)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_file_is_valid_at_full_and_smoke_scale(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEXICOORD_DATA", str(SHARED_DATA))
    monkeypatch.setenv("DEBATER_2", "scripted/first")  # three distinct debaters, as the paper had
    monkeypatch.setenv("DEBATER_3", "scripted/random")
    monkeypatch.setenv("AMBIK", str(EXPERIMENTS / "smoke" / "ambik.csv"))  # AmbiK ships no copy: rows written here
    full = from_file(path)
    smoke = from_file(path, smoke=True)
    assert bool(full.experiment.published) != (path.stem in NO_PUBLISHED), "the paper's numbers it reproduces"
    big, small = full.campaign(), smoke.campaign()
    assert 0 < len(small.episodes) <= 8 < len(big.episodes)
    calls = [c for e in big.episodes for c in full.plan.calls(full.parts, e)]
    assert calls and all(c.calls > 0 and c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)


def _runs_to_its_report(path: Path, tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> str:
    db = str(tmp_path / "runs.db")
    played = lexicoord("run", str(path), "--smoke", "--db", db, *args, env=env, check=False)
    assert played.returncode == 0 and " 0 failed" in played.stderr, played.stderr[-3000:]
    out = tmp_path / "report"
    report = lexicoord("report", f"{path.stem}-smoke", "--db", db, "--out", str(out), env=env)
    page = (out / "report.html").read_text()
    if path.stem in NO_PUBLISHED:
        assert "published numbers beside this run" not in report.stdout
        return page
    assert "published numbers beside this run" in report.stdout
    assert "published numbers beside this run" in page
    published = from_file(path).experiment.published
    for p in published:
        assert p.metric in page
    if args == [] and any(p.paper_model for p in published):  # the embedded model stands for no paper's model
        table = page.split("published numbers beside this run", 1)[1].split("</table>", 1)[0]
        verdicts = {cells[-1].split("</td>")[0] for cells in (row.split("<td>")[1:] for row in table.split("<tr>"))
                    if cells}
        assert verdicts <= {"- (another model)", ""} and "- (another model)" in verdicts, verdicts
    return page


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_file_runs_to_its_report_on_the_embedded_model(path: Path, tmp_path: Path) -> None:
    _runs_to_its_report(path, tmp_path, [])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_file_runs_to_its_report_on_a_server_on_loopback(path: Path, tmp_path: Path, llama_server: str) -> None:
    overrides = [arg for o in (*ON_SERVER[path.stem], *SERVER_SLICE[path.stem]) for arg in ("--set", o)]
    page = _runs_to_its_report(path, tmp_path, [*overrides, "--set", "cache=false"],
                               env={"LLAMACPP_BASE_URL": llama_server})
    assert "llamacpp/smollm2" in page


#: Per file, how many published numbers each table or figure of its paper gives it (every numeric cell the report
#: can name, each number once: a number a later table repeats keeps its first source).
PUBLISHED_SOURCES = {
    "werewolf-cogent": {"Section 5 / Table 2": 3, "Section 5": 3, "Table 2": 3, "Table 5": 7, "Table 6": 10,
                        "Table 7": 10},
    "debate-study": {"Figure 2": 6, "Figure 3": 2, "Figure 4": 2, "Figure 5": 4, "Figure 6": 2, "Figure 7": 4,
                     "Table 1": 9, "Table 2": 3},
    "lexicoord-campaign": {"Section 5": 4, "Figure 1 (text)": 1},
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_SOURCES))
def test_each_file_carries_every_number_of_its_papers_tables(name: str) -> None:
    published = from_file(EXPERIMENTS / f"{name}.toml").experiment.published
    counts: dict[str, int] = {}
    for p in published:
        counts[p.source] = counts.get(p.source, 0) + 1
    assert counts == PUBLISHED_SOURCES[name]
    cells = [(p.source, p.metric, tuple(sorted(p.cell.items())), p.paper_model) for p in published]
    assert len(set(cells)) == len(cells), "no table gives one cell twice for one paper model"
