"""From a file (or a command line's values) to a checked experiment and its protocol's plan, or to every problem.

Nothing runs until the whole file is checked: the common keys, the protocol's name and then its own sections,
each problem one sentence with the line it is on (or the ``--set`` it came from). ``--smoke`` applies the
file's ``[smoke]`` table as overrides, before the command line's own, so a smoke run takes the same code path
as the full one on a few items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ValidationError

from lexicoord.core.registry import get_protocol
from lexicoord.errors import ConfigError
from lexicoord.experiments.experiment import Campaign, Experiment, Plan, problems_of
from lexicoord.experiments.source import ExperimentError, Problem, Source, apply_overrides, read


@dataclass
class Loaded:
    """A checked experiment: its common keys, its protocol's plan and that plan's checked sections."""

    experiment: Experiment
    plan: Plan[Any]
    parts: BaseModel
    source: Source
    _campaign: Campaign | None = None

    def campaign(self) -> Campaign:
        """The run's episodes and config, made once (reading the data); a problem with the data (a missing file,
        a bad line in it) is an :class:`ExperimentError` at the file's ``[data]`` table."""
        if self._campaign is None:
            try:
                self._campaign = self.plan.campaign(self.experiment, self.parts)
            except ExperimentError:
                raise
            except ConfigError as exc:
                raise ExperimentError([Problem(where=self.source.where(("data",)), text=str(exc))]) from None
        return self._campaign


def plan_of(protocol: str) -> Plan[Any]:
    """The registered plan of ``protocol`` (a :class:`ConfigError` when none is installed or it has no plan)."""
    entry = get_protocol(protocol)
    if not entry.experiment:
        raise ConfigError(f"Protocol '{protocol}' takes no experiment file.")
    plan = entry.plan()
    if not isinstance(plan, Plan):
        raise ConfigError(f"Protocol '{protocol}' registers {entry.experiment}, which is not an experiment plan.")
    return plan


def from_file(path: Path, overrides: Sequence[str] = (), smoke: bool = False,
              environ: Mapping[str, str] | None = None) -> Loaded:
    """The experiment of ``path`` with the smoke table (when asked) and ``overrides`` applied, checked."""
    return _checked(read(path, environ), overrides, smoke)


def from_values(values: dict[str, Any], overrides: Sequence[str] = (), smoke: bool = False) -> Loaded:
    """The experiment a command line amounts to, checked as a file would be (problems name the command line)."""
    return _checked(Source(Path("(command line)"), values, {}, ""), overrides, smoke)


def _checked(source: Source, overrides: Sequence[str], smoke: bool) -> Loaded:
    if smoke:
        table = source.data.get("smoke", {})
        if not isinstance(table, dict) or not table:
            raise ExperimentError([Problem(where=source.where(("smoke",)),
                                           text="--smoke needs the file's [smoke] table of overrides.")])
        apply_overrides(source, [f"{k}={_toml_value(v)}" for k, v in table.items()])
    apply_overrides(source, overrides)
    problems: list[Problem] = list(source.problems)

    def note(error: ValidationError) -> None:
        for path, text in problems_of(error):
            if not any(path[:len(u)] == u for u in source.unset):  # an unset variable is its own problem
                problems.append(Problem(where=source.where(path), text=text))

    experiment: Experiment | None = None
    try:
        experiment = Experiment.model_validate(source.data)
    except ValidationError as exc:
        note(exc)
    plan: Plan[Any] | None = None
    protocol = source.data.get("protocol")
    if isinstance(protocol, str):
        try:
            plan = plan_of(protocol)
        except ConfigError as exc:
            problems.append(Problem(where=source.where(("protocol",)), text=str(exc)))
    parts: BaseModel | None = None
    if plan is not None:
        sections = {k: source.data[k] for k in ("models", "data", "settings", "grid") if k in source.data}
        try:
            parts = plan.parts.model_validate(sections, context={"base": source.base})
        except ValidationError as exc:
            note(exc)
    if problems or experiment is None or plan is None or parts is None:
        raise ExperimentError(list({str(p): p for p in problems}.values()))
    return Loaded(experiment=experiment, plan=plan, parts=parts, source=source)


def _toml_value(value: Any) -> str:
    return tomli_w.dumps({"v": value}).partition("=")[2].strip()


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def to_toml(values: dict[str, Any]) -> str:
    """An experiment's values as a file (keys with no value left out: TOML has no null)."""
    return tomli_w.dumps(_without_none(values))
