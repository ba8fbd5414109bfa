"""What an experiment file holds, and the seam through which each protocol reads it.

The keys every experiment has (protocol, run name, seed, concurrency, prices, published numbers, the smoke
scale) are checked here. The four sections that differ by protocol (``models`` by role, ``data``,
``settings``, ``grid``) are checked by the protocol's :class:`Plan`, whose one ``Parts`` model names them, so a
problem anywhere comes back with the path of its key and so with its line in the file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from lexicoord.analysis.paper import Published
from lexicoord.core.spec import EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.models.budget import RateLimit
from lexicoord.runs.names import check_run_name

if TYPE_CHECKING:
    from lexicoord.runs.store import Store


def known_model(spec: str) -> str:
    """``spec`` if it names a known provider; a ``ValueError`` a settings model reports at the key."""
    from lexicoord.models.registry import check_spec

    try:
        return check_spec(spec)
    except ConfigError as exc:
        raise ValueError(str(exc).rstrip(".")) from None


#: ``provider/model`` of a known provider (``lexicoord models`` lists them).
ModelName = Annotated[str, AfterValidator(known_model)]


def existing_data(value: str, info: ValidationInfo) -> str:
    """A data file or folder that exists, or a name no path stands behind (``builtin``, ``hf:NAME``); a
    ``SCHEME:PATH`` such as ``coarsewsd:FOLDER`` is checked for its path. A relative path in a file is the
    file's own folder's (the validation context's ``base``), as a reader of the file expects, wherever the
    command runs from."""
    if value == "builtin" or value.startswith("hf:"):
        return value
    scheme, sep, rest = value.partition(":")
    named = sep and len(scheme) > 1 and scheme.replace("-", "").isalpha()
    prefix, target = (f"{scheme}:", rest) if named else ("", value)
    path = Path(target).expanduser()
    base = (info.context or {}).get("base")
    if base is not None and not path.is_absolute():
        path = Path(base) / path
        value = f"{prefix}{path}"
    if not path.exists():
        raise ValueError(f"no file or folder at {path}")
    return value


#: A path to data (checked to exist before anything runs), or a name that needs none.
DataPath = Annotated[str, AfterValidator(existing_data)]


class Strict(BaseModel):
    """A section of a file: an unknown key is a problem, never ignored (a typo would silently change nothing)."""

    model_config = ConfigDict(extra="forbid")


class Price(Strict):
    """What a model costs, in US dollars per million tokens, as providers publish it."""

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


class Experiment(Strict):
    """The keys every experiment file has; ``models``, ``data``, ``settings`` and ``grid`` are the protocol's."""

    protocol: str
    #: The run's name; the same name resumes it and grows it. Default: the protocol's prefix and the time.
    name: str | None = None
    description: str = ""
    seed: int = 0
    concurrency: int = Field(default=4, ge=1, le=256)
    #: Read and write the response cache.
    cache: bool = True
    models: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, Any] = Field(default_factory=dict)
    #: Options of every model (``timeout``, ``max_retries``, ``base_url``, ``n_ctx`` ...), as ``--option`` gives them.
    options: dict[str, Any] = Field(default_factory=dict)
    #: Prices by model, for the cost ``--dry-run`` and reports print.
    prices: dict[str, Price] = Field(default_factory=dict)
    #: Each model's requests and tokens a minute (a provider's limits), shared by every process of the run.
    rate_limits: dict[str, RateLimit] = Field(default_factory=dict)
    #: What ``--smoke`` changes, as ``--set`` would (``"data.items" = 2``): the same code path, a few items.
    smoke: dict[str, Any] = Field(default_factory=dict)
    #: The paper's numbers this experiment reproduces, stored with the run and printed beside its own.
    published: list[Published] = Field(default_factory=list)
    #: Which of the run's models stands for which of the paper's (the paper's name: a run model or a list of them),
    #: so that a published number gets its verdict beside those models' values and no other's.
    paper_models: dict[str, str | list[str]] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check_run_name(value)
        except ConfigError as exc:
            raise ValueError(str(exc).rstrip(".")) from None


def placed_elsewhere(values: Any, homes: dict[str, str]) -> Any:
    """``values`` of a settings section, refused when they hold a key the file sets in another section (a
    protocol's settings model has the variant or the condition, which an experiment sets in its grid)."""
    if isinstance(values, dict):
        for key, home in homes.items():
            if key in values:
                raise ValueError(f"'{key}' is set in {home}, not in settings")
    return values


@dataclass
class Call:
    """The calls one episode makes to one model, at most, with the tokens they are expected to take."""

    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int


@dataclass
class Campaign:
    """An experiment as the runner takes it: the episodes of one run and the config stored with it."""

    episodes: list[EpisodeSpec]
    config: dict[str, Any]
    #: Models called beyond the line-ups (a judge), resolved before the first episode.
    also_models: list[str] = field(default_factory=list)


P = TypeVar("P", bound=BaseModel)


class Plan(ABC, Generic[P]):
    """How one protocol reads an experiment: its sections' model, its episodes, its calls and what a run may grow.

    A protocol registers its plan (``ProtocolEntry.experiment``), as it registers its report, so that
    ``lexicoord run FILE`` knows a protocol installed from another distribution.
    """

    #: The protocol's sections: a model with the fields ``models``, ``data``, ``settings`` and ``grid``.
    parts: ClassVar[type[BaseModel]]
    #: The default run name's prefix (see :meth:`prefix_of`).
    prefix: ClassVar[str]
    #: Keys of the stored config that a run may grow on a re-run (a count grows, a list gains entries); any other
    #: difference from the stored config is refused, since it would change the episodes already played.
    grows: ClassVar[tuple[str, ...]] = ()
    #: The command that prints the report, said at the end of a run.
    report_command: ClassVar[str] = "lexicoord report"

    def prefix_of(self, parts: P) -> str:
        """The start of a run's default name (the time follows)."""
        return self.prefix

    @abstractmethod
    def campaign(self, experiment: Experiment, parts: P) -> Campaign:
        """The run's episodes and config; data are read here (a missing file is a :class:`ConfigError`)."""

    def without_data(self, experiment: Experiment, parts: P) -> tuple[Campaign, str] | None:
        """A dry run's campaign while the data is not on disk yet (as many episodes as the file says, each item a
        stand-in of the data's usual size), and the sentence that says what is missing; ``None`` where the episodes
        cannot be counted without the data, or the data is there (its own problem is then the one to show)."""
        return None

    @abstractmethod
    def calls(self, parts: P, episode: EpisodeSpec) -> list[Call]:
        """The model calls of one episode at most (every round played), from the protocol's call pattern."""

    def after(self, store: Store, run_id: str, say: Callable[[str], None]) -> None:
        """What to tell the user once the run ends, failed episodes or not (warnings about its answers)."""


def problems_of(error: ValidationError) -> list[tuple[tuple[str | int, ...], str]]:
    """Each problem of a validation error as (path of the key, one sentence)."""
    out = []
    for e in error.errors():
        path = tuple(e["loc"])
        message = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            message = "unknown key"
        elif e["type"] == "missing":
            message = "required, and missing"
        name = ".".join(str(p) for p in path)
        out.append((tuple(path), f"{name}: {message}." if not message.endswith(".") else f"{name}: {message}"))
    return out
