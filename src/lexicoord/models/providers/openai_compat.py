"""One provider for every server that speaks the OpenAI chat-completions API."""

from __future__ import annotations

import asyncio
import email.utils
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from lexicoord.errors import ConfigError, MissingKeyError, ModelError, ModelNotFoundError, ProviderHTTPError
from lexicoord.models.provider import Provider, TransientError
from lexicoord.models.providers.presets import PRESETS, Preset
from lexicoord.models.structured import requested_schema, with_schema_instruction
from lexicoord.models.types import ChatMessage, GenerateConfig, ProviderResponse, Usage

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: either a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _describe_body(response: httpx.Response) -> str:
    """A short, readable account of an error body (JSON error message, HTML title, or text)."""
    text = response.text
    if "html" in response.headers.get("content-type", "") or text.lstrip().startswith("<"):
        title = _TITLE.search(text)
        return f"an HTML page ({title.group(1).strip()})" if title else "an HTML page"
    try:
        data = response.json()
        error = data.get("error", data) if isinstance(data, dict) else data
        message = error.get("message") if isinstance(error, dict) else error
        return str(message)[:300]
    except (ValueError, AttributeError):
        return text.strip()[:300] or "an empty body"


class OpenAICompatibleProvider(Provider):
    supports_json_schema = True

    def __init__(
        self,
        preset: Preset,
        model_name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(preset.name, model_name)
        self.preset = preset
        source = "the base_url option" if base_url else preset.base_url_env
        self.base_url = (base_url or os.environ.get(preset.base_url_env) or preset.base_url or "").rstrip("/")
        if not self.base_url:
            raise ConfigError(
                f"{preset.base_url_env} is not set: the '{preset.name}' provider needs the server's "
                "base URL (for example http://localhost:8000/v1)."
            )
        try:
            scheme = httpx.URL(self.base_url).scheme
        except httpx.InvalidURL:
            scheme = ""
        if scheme not in ("http", "https"):
            raise ConfigError(
                f"'{self.base_url}' from {source} is not an http(s) URL (for example http://localhost:8000/v1)."
            )
        self.api_key = api_key or os.environ.get(preset.key_env)
        if preset.key_required and not self.api_key:
            raise MissingKeyError(preset.key_env, preset.name)
        self.default_concurrency = max_concurrency or preset.concurrency
        # How this server takes a schema; we step down the list when it refuses one.
        self._schema_modes = ["json_schema", "json_object", "prompt"]
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def limit_key(self) -> str:
        return f"{self.name}:{self.base_url}"

    @property
    def cache_identity(self) -> str:
        return f"{self.spec}@{self.base_url}"

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                headers=headers,
                timeout=httpx.Timeout(None, connect=15.0),
                limits=httpx.Limits(max_connections=max(self.default_concurrency, 1) * 2),
            )
            self._client_loop = loop
        return self._client

    def _body(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
        schema = requested_schema(config)
        mode = self._schema_modes[0]
        if schema is not None and mode == "prompt":
            messages = with_schema_instruction(messages, schema)
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [m.model_dump() for m in messages],
        }
        for field in ("temperature", "max_tokens", "seed"):
            value = getattr(config, field)
            if value is not None:
                body[field] = value
        if config.stop:
            body["stop"] = list(config.stop)
        if config.logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = config.logprobs
        if schema is not None and mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": False},
            }
        elif schema is not None and mode == "json_object":
            # llama.cpp's and some other servers' form: a grammar from the schema.
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> ProviderResponse:
        while True:
            mode = self._schema_modes[0]
            body = self._body(messages, config)
            response = await self._post(body)
            refused = (
                response.status_code in (400, 422, 500)
                and "response_format" in body
                and re.search(r"response_format|json_schema|schema", response.text, re.IGNORECASE)
            )
            if not refused:
                return self._read(response, logprobs=config.logprobs is not None)
            # The server refused this form of structured output: try the next one, down to
            # asking in the prompt. Concurrent calls may all see the refusal: step down once.
            if self._schema_modes[0] == mode and len(self._schema_modes) > 1:
                self._schema_modes.pop(0)

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        url = f"{self.base_url}/chat/completions"
        try:
            return await self._http().post("/chat/completions", json=body)
        except httpx.ConnectError as exc:
            raise TransientError(
                f"Cannot reach {url} ({exc.__class__.__name__}: {exc or 'connection failed'}); is the "
                f"server running? Set {self.preset.base_url_env} to its address",
                kind="connection",
            ) from None
        except httpx.TimeoutException:
            raise TransientError(f"{url} timed out", kind="timeout") from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise TransientError(f"The connection to {url} broke ({exc})", kind="connection") from None
        except httpx.HTTPError as exc:
            raise ModelError(f"The request to {url} failed: {exc.__class__.__name__}: {exc}.") from None

    def _read(self, response: httpx.Response, *, logprobs: bool = False) -> ProviderResponse:
        """The completion in ``response``; its first token's ``top_logprobs`` only when ``logprobs`` (asked for)."""
        status = response.status_code
        where = f"{self.base_url} ({self.spec})"
        if status == 429 or status >= 500:
            raise TransientError(
                f"{where} answered HTTP {status} with {_describe_body(response)}",
                retry_after=_retry_after(response.headers.get("retry-after")),
                kind="http",
            )
        if status in (401, 403):
            raise ConfigError(
                f"{where} refused the request (HTTP {status}: {_describe_body(response)}); "
                f"check {self.preset.key_env}."
            )
        if status == 404:
            raise ModelNotFoundError(
                f"{where} answered 404 ({_describe_body(response)}); check the model name "
                f"'{self.model_name}' and {self.preset.base_url_env}."
            )
        if status >= 400:
            raise ProviderHTTPError(f"{where} rejected the request: HTTP {status}, {_describe_body(response)}.", status)
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ProviderHTTPError(
                f"{where} answered HTTP {status} with {_describe_body(response)} instead of a chat completion.",
                status,
            ) from None
        usage = data.get("usage") or {}
        return ProviderResponse(
            text=text,
            usage=Usage(
                prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens")
            ),
            model=f"{self.name}/{data.get('model') or self.model_name}",
            finish_reason=choice.get("finish_reason"),
            top_logprobs=_first_token_logprobs(choice) if logprobs else None,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _factory(preset: Preset) -> Callable[..., OpenAICompatibleProvider]:
    def factory(model_name: str, *, base_url: str | None = None, api_key: str | None = None) -> OpenAICompatibleProvider:
        return OpenAICompatibleProvider(preset, model_name, base_url=base_url, api_key=api_key)

    return factory


def register_openai_compatible(preset: Preset) -> None:
    """Add a named OpenAI-compatible service (its own base URL and key variable)."""
    from lexicoord.models.registry import register_provider

    details = {"base URL": preset.base_url or f"${preset.base_url_env}", "key": preset.key_env}
    if not preset.key_required:
        details["key"] += " (optional)"
    register_provider(
        preset.name,
        _factory(preset),
        description=f"OpenAI-compatible: {preset.description}",
        details=details,
    )


def register() -> None:
    for preset in PRESETS:
        register_openai_compatible(preset)


__all__ = ["OpenAICompatibleProvider", "register", "register_openai_compatible"]


def _first_token_logprobs(choice: dict[str, Any]) -> dict[str, float] | None:
    """OpenAI's ``choices[0].logprobs.content[0].top_logprobs`` (a list of ``{token, logprob}``) as a mapping;
    ``None`` when the server sent none (the model layer then says so, if they were asked for)."""
    try:
        first = (choice.get("logprobs") or {}).get("content") or []
        alternatives = first[0].get("top_logprobs") or [] if first else []
        found: dict[str, float] = {}
        for entry in alternatives:
            token, value = str(entry["token"]), float(entry["logprob"])
            found[token] = max(value, found.get(token, float("-inf")))
        return found or None
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return None
