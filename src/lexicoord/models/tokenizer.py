"""One named tokenizer for every output, offline: a GGUF's own vocabulary, loaded without its weights.

Length metrics default to the completion tokens each backend reported; a study comparing two backends
(or a person with a model) needs one ruler for both, and this is it.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from lexicoord.errors import ConfigError

Counter = Callable[[str, "int | None"], "int | None"]


@lru_cache(maxsize=4)
def _vocab(name: str) -> Any:
    from lexicoord.models.providers.llama_check import ensure_llama_runs
    from lexicoord.models.providers.local import resolve_path

    if not name.startswith("local/"):
        raise ConfigError(f"Unknown tokenizer '{name}': name an embedded model (local/smollm2-135m) or "
                          "a GGUF file (local//path/model.gguf); 'backend' counts what each backend reported, "
                          "'words' counts whitespace-separated words.")
    path = resolve_path(name.removeprefix("local/"))
    ensure_llama_runs(path)
    from llama_cpp import Llama

    vocab = Llama(str(path), vocab_only=True, verbose=False)
    # Freed at exit while the interpreter is whole (see providers/local.py: left to __del__, it prints a traceback).
    atexit.register(vocab.close)
    return vocab


def named_tokenizer(name: str) -> Counter:
    """``backend`` (what each backend reported), ``words`` (whitespace-separated words, for texts no backend
    counted) or ``local/NAME``: that GGUF's vocabulary counts every text."""
    if name == "backend":
        return lambda text, reported: reported
    if name == "words":
        return lambda text, reported: len(text.split())
    vocab = _vocab(name)
    return lambda text, reported: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
