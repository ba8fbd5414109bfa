"""Providers by name, and ``provider/model`` specs turned into Models.

Built-in providers register through the ``lexicoord.providers`` entry-point
group, exactly as a third-party package would: an entry point names a
callable that calls :func:`register_provider`. Code can also call
:func:`register_provider` directly. Factories import their SDKs lazily, so
listing providers never loads llama.cpp.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from lexicoord import paths
from lexicoord.core.plugins import Registry
from lexicoord.errors import ConfigError, UnknownProviderError
from lexicoord.models.cache import Cache, ResponseCache
from lexicoord.models.model import Model
from lexicoord.models.provider import Provider
from lexicoord.models.types import GenerateConfig

ProviderFactory = Callable[..., Provider]
"""``factory(model_name, **options) -> Provider``."""

ENTRY_POINT_GROUP = "lexicoord.providers"
_MODEL_OPTIONS = {"timeout", "max_retries", "timeout_retries", "backoff_initial", "backoff_max", "max_concurrency",
                  "max_reply_chars"}


@dataclass
class ProviderInfo:
    name: str
    factory: ProviderFactory
    description: str = ""
    examples: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)


plugin_errors: list[str] = []
"""One sentence per provider plugin that failed to load (shown by ``lexicoord models``)."""

_providers: Registry[ProviderInfo] = Registry("provider", ENTRY_POINT_GROUP, on_failure=plugin_errors.append)


def register_provider(
    name: str,
    factory: ProviderFactory,
    *,
    description: str = "",
    examples: list[str] | None = None,
    details: dict[str, str] | None = None,
) -> None:
    """Make ``name/...`` specs resolve through ``factory``; refused when another package's provider has the name
    (the same module registering again replaces its own)."""
    if not name or "/" in name:
        raise ValueError(f"provider name must be non-empty and contain no '/': {name!r}")
    _providers.register(name, ProviderInfo(name, factory, description, list(examples or []), dict(details or {})),
                        getattr(factory, "__module__", None) or "unknown")


def list_providers() -> list[ProviderInfo]:
    return sorted(_providers.all().values(), key=lambda p: p.name)


def parse_spec(spec: str) -> tuple[str, str]:
    """``"vllm/Qwen/Qwen2.5-7B"`` -> ``("vllm", "Qwen/Qwen2.5-7B")``."""
    provider, sep, model_name = spec.partition("/")
    if not sep or not provider or not model_name:
        raise ConfigError(
            f"Model spec '{spec}' is not of the form provider/model (for example local/smollm2-135m "
            "or openai/gpt-4o-mini); run 'lexicoord models' to list providers."
        )
    return provider, model_name


def _info(spec: str) -> tuple[ProviderInfo, str]:
    name, model_name = parse_spec(spec)
    info = _providers.get(
        name, lambda known: UnknownProviderError(f"Unknown provider '{name}' in '{spec}'; known providers: {known}."))
    return info, model_name


def check_spec(spec: str) -> str:
    """``spec`` itself if it names a known provider, checked without making the provider (no SDK imported,
    no key read), so a file's every model is checked before anything runs."""
    _info(spec)
    return spec


def get_provider(spec: str, **options: Any) -> Provider:
    info, model_name = _info(spec)
    name = info.name
    try:
        return info.factory(model_name, **options)
    except TypeError:
        accepted = _accepted_options(info.factory)
        unknown = [k for k in options if accepted is not None and k not in accepted]
        if not unknown:
            raise
        hint = f" (it takes: {', '.join(sorted(accepted))})" if accepted else ""
        raise ConfigError(f"Provider '{name}' does not take the option '{unknown[0]}'{hint}.") from None
    except ValueError as exc:  # an option of the right name with a value the provider cannot use
        given = ", ".join(f"{k}={v!r}" for k, v in options.items())
        raise ConfigError(f"Provider '{name}' cannot use the options {given}: {exc}.") from None


def _accepted_options(factory: ProviderFactory) -> set[str] | None:
    """Keyword options a factory takes, or ``None`` if it takes any."""
    target = inspect.unwrap(factory)
    params = inspect.signature(target).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind is p.KEYWORD_ONLY}


def _model_options(options: dict[str, Any]) -> dict[str, Any]:
    """Model options checked and typed, with a sentence naming the one that is wrong."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        kind = int if key in ("max_retries", "max_concurrency", "timeout_retries", "max_reply_chars") else float
        try:
            out[key] = kind(value)
        except (TypeError, ValueError):
            noun = "a whole number" if kind is int else "a number"
            raise ConfigError(f"{key} must be {noun}, not {value!r}.") from None
        if out[key] < 0:
            raise ConfigError(f"{key} must not be negative, not {value!r}.")
    return out


def cache_enabled_by_env() -> bool:
    return os.environ.get("LEXICOORD_CACHE", "1").strip().lower() not in {"0", "false", "off", "no"}


@lru_cache(maxsize=8)
def _open_cache(path: Path) -> ResponseCache:
    network = paths.on_network_file_system(path)
    if network is not None:  # never silently: SQLite's locks over a network file system are not safe
        logging.getLogger("lexicoord.models.cache").warning(
            "the response cache %s is on a network file system (%s), where SQLite is not safe for processes on "
            "several machines; set LEXICOORD_CACHE_PATH to node-local storage (a job's $TMPDIR).", path, network)
    return ResponseCache(path)


def default_cache() -> ResponseCache:
    """The response cache at :func:`lexicoord.paths.cache_path` (one connection per file)."""
    return _open_cache(paths.cache_path().resolve())


def get_model(
    spec: str,
    *,
    cache: bool | Cache | None = None,
    config: GenerateConfig | None = None,
    **options: Any,
) -> Model:
    """A ready Model for ``spec``.

    ``cache``: ``None`` follows ``$LEXICOORD_CACHE`` (on unless set to 0/false/off),
    ``True``/``False`` force it, or pass a :class:`~lexicoord.models.cache.Cache`. Options named
    ``timeout``, ``max_retries``, ``backoff_initial``, ``backoff_max``,
    ``max_concurrency`` and ``max_reply_chars`` configure the Model; the rest go to the provider.
    """
    model_opts = _model_options({k: v for k, v in options.items() if k in _MODEL_OPTIONS})
    provider_opts = {k: v for k, v in options.items() if k not in _MODEL_OPTIONS}
    provider = get_provider(spec, **provider_opts)
    if cache is None:
        cache = cache_enabled_by_env()
    response_cache = default_cache() if cache is True else None if cache is False else cache
    return Model(provider, config=config, cache=response_cache, **model_opts)
