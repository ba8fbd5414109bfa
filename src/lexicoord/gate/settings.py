"""A gate's configuration: which policy, which models, and the bounds every policy shares.

One configuration is one run in the store (its id is derived from the configuration unless named), so every
check made under the same settings is an episode of the same run, and a report compares like with like.
A configuration can be a TOML file (``lexicoord gate calibrate`` writes one with its threshold).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lexicoord.errors import ConfigError
from lexicoord.gate.verdict import Policy

#: The embedded model: a gate runs on a fresh machine with no key and no network.
DEFAULT_MODEL = "local/smollm2-135m"


class GateSettings(BaseModel):
    """Everything that decides how a check is made (stored as the run's configuration)."""

    model_config = ConfigDict(extra="forbid")

    policy: Policy = "adaptive"
    #: The models seats are filled from, in turn (one model: every seat is a copy of it).
    models: list[str] = Field(default_factory=lambda: [DEFAULT_MODEL], min_length=1)
    #: Questions the person may be asked before the gate refuses (the debate paper asks one).
    clarifications: int = Field(default=1, ge=0, le=5)
    #: Seconds a person has to answer a question; then the gate refuses.
    person_timeout: float = Field(default=900.0, gt=0)
    #: Seconds the models have to reach a verdict (a person's answering time is not counted); then ``error``.
    timeout: float = Field(default=120.0, gt=0)
    #: ``debate``: followers of the leader and rounds before no consensus.
    followers: int = Field(default=2, ge=1, le=6)
    rounds: int = Field(default=3, ge=1, le=20)
    #: ``coalition``: the players who choose a reading.
    players: int = Field(default=3, ge=2, le=8)
    #: ``conformal``: the calibrated threshold on 1 - p(option) (``lexicoord gate calibrate``), and the success
    #: level it was calibrated for (recorded, not used).
    qhat: float | None = Field(default=None, ge=0, le=1)
    target_success: float | None = Field(default=None, gt=0, lt=1)
    #: The model ``qhat`` was calibrated with: the scorer must be it (a threshold holds for its model only).
    calibrated_model: str | None = None
    #: ``conformal``: the least share of the scorer's first token the option letters must hold, else ``error``.
    min_letter_mass: float = Field(default=0.5, ge=0, le=1)
    #: ``adaptive``: the cheap check, and the policy that decides when the cheap one is unsure.
    first: Literal["single", "conformal"] = "single"
    then: Literal["debate", "coalition"] = "debate"
    #: Sentences of reasoning a debate reply may hold.
    sentences: int = Field(default=3, ge=1, le=10)

    @property
    def run_id(self) -> str:
        """``gate-POLICY-HASH``: the same settings always land in the same run."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return f"gate-{self.policy}-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"

    def uses(self, policy: str) -> bool:
        """Whether a check under these settings may run ``policy`` (adaptive runs two)."""
        return policy == self.policy or (self.policy == "adaptive" and policy in (self.first, self.then))

    def check(self) -> GateSettings:
        if self.uses("conformal") and self.qhat is None:
            raise ConfigError("The conformal check needs a threshold: run `lexicoord gate calibrate FILE` "
                              "and use the configuration it writes, or set qhat.")
        if self.uses("conformal") and self.calibrated_model and self.models[0] != self.calibrated_model:
            raise ConfigError(f"qhat was calibrated with {self.calibrated_model}, not {self.models[0]} (the scorer): "
                              "calibrate again for this model.")
        return self


def read_settings(path: Path) -> GateSettings:
    """A gate configuration from a TOML file (the keys of :class:`GateSettings`), checked whole."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the gate configuration {path}: {exc.strerror}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}).") from None
    try:
        return GateSettings.model_validate(data.get("gate", data)).check()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{path}: {problems}.") from None


def settings_from(path: Path | None, policy: str | None = None, models: list[str] | None = None) -> GateSettings:
    """A configuration file's settings (or the defaults) with a command line's ``--policy`` and ``--model`` over
    them, checked whole."""
    data: dict[str, object] = read_settings(path).model_dump() if path is not None else {}
    if policy is not None:
        data["policy"] = policy
    if models:
        data["models"] = list(models)
    try:
        return GateSettings.model_validate(data).check()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"Gate settings: {problems}.") from None
