from collections.abc import Sequence

import pytest

from lexicoord.errors import ConfigError, MissingKeyError, UnknownProviderError
from lexicoord.models import GenerateConfig, Provider, ProviderResponse, get_model, list_providers, register_provider
from lexicoord.models.types import ChatMessage


def test_builtins_register_through_entry_points() -> None:
    names = {p.name for p in list_providers()}
    assert {"openai", "groq", "mistral", "together", "ollama", "vllm", "llamacpp", "local", "scripted"} <= names


@pytest.mark.parametrize("spec", ["gpt-4o", "openai/", "/model", ""])
def test_malformed_spec(spec: str) -> None:
    with pytest.raises(ConfigError, match="provider/model"):
        get_model(spec)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UnknownProviderError, match="Unknown provider 'nope'.*openai"):
        get_model("nope/x")


@pytest.mark.parametrize("provider,variable", [("openai", "OPENAI_API_KEY"), ("groq", "GROQ_API_KEY"), ("mistral", "MISTRAL_API_KEY")])
def test_missing_key_names_the_variable(provider: str, variable: str) -> None:
    with pytest.raises(MissingKeyError) as info:
        get_model(f"{provider}/some-model")
    assert str(info.value).startswith(f"{variable} is not set")


def test_model_names_may_contain_slashes(monkeypatch: pytest.MonkeyPatch) -> None:
    model = get_model("vllm/Qwen/Qwen2.5-7B-Instruct", cache=False)
    assert model.provider.model_name == "Qwen/Qwen2.5-7B-Instruct"
    assert model.provider.base_url == "http://localhost:8000/v1"


def test_missing_gguf_names_the_path(tmp_path) -> None:
    missing = tmp_path / "absent.gguf"
    with pytest.raises(ConfigError, match=f"GGUF file not found: {missing}"):
        get_model(f"local/{missing}")


async def test_a_third_party_provider_registers_like_the_builtins() -> None:
    class Reverse(Provider):
        async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> ProviderResponse:
            return ProviderResponse(text=messages[-1].content[::-1])

    register_provider("reverse", lambda name, **opts: Reverse("reverse", name), description="reverses")
    assert any(p.name == "reverse" for p in list_providers())
    out = await get_model("reverse/any", cache=False).generate("abc")
    assert out.text == "cba" and out.model == "reverse/any"
