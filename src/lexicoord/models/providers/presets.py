"""Services that speak the OpenAI chat API, each a base URL and a key variable.

Every preset reads ``<NAME>_API_KEY`` and ``<NAME>_BASE_URL`` (upper case,
``-`` as ``_``); the base URL variable overrides the default. Local servers
need no key.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    name: str
    base_url: str | None
    key_required: bool
    description: str
    concurrency: int = 16

    @property
    def env_prefix(self) -> str:
        return self.name.upper().replace("-", "_")

    @property
    def key_env(self) -> str:
        return f"{self.env_prefix}_API_KEY"

    @property
    def base_url_env(self) -> str:
        return f"{self.env_prefix}_BASE_URL"


PRESETS: tuple[Preset, ...] = (
    Preset("openai", "https://api.openai.com/v1", True, "OpenAI"),
    Preset("groq", "https://api.groq.com/openai/v1", True, "Groq"),
    Preset("mistral", "https://api.mistral.ai/v1", True, "Mistral AI"),
    Preset("together", "https://api.together.xyz/v1", True, "Together AI"),
    Preset("ollama", "http://localhost:11434/v1", False, "Ollama on this machine", concurrency=4),
    Preset("vllm", "http://localhost:8000/v1", False, "a vLLM server", concurrency=64),
    Preset("llamacpp", "http://localhost:8080/v1", False, "llama.cpp's server", concurrency=4),
    Preset("lmstudio", "http://localhost:1234/v1", False, "LM Studio's server", concurrency=4),
    Preset(
        "openai-compatible",
        None,
        False,
        "any other OpenAI-compatible server (set OPENAI_COMPATIBLE_BASE_URL)",
    ),
)
