"""One async interface over every model backend.

>>> model = get_model("local/smollm2-135m")
>>> out = await model.generate("Say hi", max_tokens=8)
"""

from lexicoord.models.cache import ResponseCache
from lexicoord.models.model import Model
from lexicoord.models.observe import ModelCallRecord, acting_as, observing
from lexicoord.models.provider import Provider, TransientError
from lexicoord.models.registry import get_model, get_provider, list_providers, parse_spec, register_provider
from lexicoord.models.types import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ProviderResponse,
    Usage,
    assistant,
    system,
    user,
)

__all__ = [
    "ChatMessage",
    "GenerateConfig",
    "Model",
    "ModelCallRecord",
    "ModelOutput",
    "Provider",
    "ProviderResponse",
    "ResponseCache",
    "TransientError",
    "Usage",
    "acting_as",
    "assistant",
    "get_model",
    "get_provider",
    "observing",
    "parse_spec",
    "list_providers",
    "register_provider",
    "system",
    "user",
]
