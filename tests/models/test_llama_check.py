"""The llama.cpp check: a build that dies on this CPU gives one sentence and exit 1, never a silent signal.

The stand-in for a crashing build is a real shared library compiled here (a C compiler is needed to install
llama.cpp at all) that executes an illegal instruction, or writes through a null pointer, as it is loaded.
"""

import json
import os
import platform
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lexicoord.errors import ConfigError
from lexicoord.models import get_model
from lexicoord.models.providers import llama_check
from lexicoord.models.providers.llama_check import LlamaCrashError, Probe, check
from lexicoord.runs.store import Store
from tests.cli.test_cli import lexicoord

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = r"""
__attribute__((constructor)) static void on_load(void) {
#ifdef CRASH_SEGV
    *(volatile int *)0 = 1;   /* what the reported crash was: SIGSEGV */
#else
    __builtin_trap();         /* an instruction the CPU refuses: SIGILL */
#endif
}
int lexicoord_stand_in(void) { return 0; }
"""


def stand_in_library(folder: Path, crash: str) -> Path:
    """A ``libllama.so`` that kills whoever loads it with ``crash`` (SIGILL or SIGSEGV)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "stand_in.c"
    source.write_text(STAND_IN)
    library = folder / "libllama.so"
    flags = ["-DCRASH_SEGV"] if crash == "SIGSEGV" else []
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O0", *flags, "-o", str(library), str(source)],
                   check=True, capture_output=True)
    return library


def counting(counter: Path, then: str = "") -> tuple[str, ...]:
    """A child that notes it ran in ``counter``, then runs ``then``."""
    return (sys.executable, "-c", f"open({str(counter)!r}, 'a').write('x\\n')\n{then}")


def runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def portable_flags_in_makefile() -> str:
    [flags] = re.findall(r"^CMAKE_ARGS \?= (.+)$", (ROOT / "Makefile").read_text(), flags=re.M)
    return flags.strip()


@pytest.mark.parametrize("crash", ["SIGILL", "SIGSEGV"])
def test_a_build_that_crashes_in_the_child_gives_one_sentence(tmp_path: Path, crash: str) -> None:
    library = stand_in_library(tmp_path / "lib", crash)
    probe = Probe(library=library.parent, files=(library,),
                  command=(sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(library)))
    with pytest.raises(LlamaCrashError) as info:
        check(probe, tmp_path / "verdicts.json")
    message = str(info.value)
    assert isinstance(info.value, ConfigError)  # the command line prints it as one sentence and exits 1
    assert f"crashed ({crash})" in message and str(library.parent) in message
    assert "CPU instructions this machine cannot run" in message
    assert f'CMAKE_ARGS="{llama_check.portable_cmake_args()}"' in message
    assert f"{sys.executable} -m pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python" in message
    assert "\n" not in message and ". " not in message, "one sentence"


def test_the_verdict_is_kept_per_library_file_and_a_changed_file_is_checked_again(tmp_path: Path) -> None:
    library = tmp_path / "libllama.so"
    library.write_bytes(b"build 1")
    counter, verdicts = tmp_path / "ran", tmp_path / "home" / "verdicts.json"
    probe = Probe(library=tmp_path, files=(library,), command=counting(counter))
    check(probe, verdicts)
    check(probe, verdicts)
    assert runs(counter) == 1, "the same library file is not checked twice"
    assert list(json.loads(verdicts.read_text()).values()) == ["ok"]

    library.write_bytes(b"build 2, rebuilt")  # a reinstall: another size and time
    check(probe, verdicts)
    assert runs(counter) == 2
    stat = library.stat()
    os.utime(library, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same size, touched
    check(probe, verdicts)
    check(probe, verdicts)
    assert runs(counter) == 3


def test_a_crash_verdict_is_kept_too(tmp_path: Path) -> None:
    library = tmp_path / "libggml-cpu.so"
    library.write_bytes(b"native build")
    counter = tmp_path / "ran"
    probe = Probe(library=tmp_path, files=(library,),
                  command=counting(counter, "import os, signal; os.kill(os.getpid(), signal.SIGILL)"))
    for _ in range(2):
        with pytest.raises(LlamaCrashError, match=r"crashed \(SIGILL\)"):
            check(probe, tmp_path / "verdicts.json")
    assert runs(counter) == 1


@pytest.mark.parametrize("then,why", [
    ("raise SystemExit(3)", "an error of its own: the load in this process reports it"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "killed from outside (memory, a user): not the CPU"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", "stopped: not the CPU"),
])
def test_a_child_that_ends_otherwise_is_no_verdict(tmp_path: Path, then: str, why: str) -> None:
    library = tmp_path / "libllama.so"
    library.write_bytes(b"x")
    counter, verdicts = tmp_path / "ran", tmp_path / "verdicts.json"
    probe = Probe(library=tmp_path, files=(library,), command=counting(counter, then))
    check(probe, verdicts)
    check(probe, verdicts)
    assert runs(counter) == 2 and not verdicts.exists(), why


def test_a_hung_child_does_not_hang_the_command(tmp_path: Path) -> None:
    probe = Probe(library=tmp_path, files=(), command=(sys.executable, "-c", "import time; time.sleep(60)"))
    check(probe, tmp_path / "verdicts.json", timeout=0.5)
    assert not (tmp_path / "verdicts.json").exists()


def test_a_local_model_is_refused_before_llama_cpp_loads_in_this_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in_library(tmp_path / "lib", "SIGILL")
    monkeypatch.setenv("LLAMA_CPP_LIB_PATH", str(tmp_path / "lib"))  # llama-cpp-python's own override
    with pytest.raises(LlamaCrashError, match="CPU instructions this machine cannot run"):
        get_model("local/smollm2-135m", cache=False)


@pytest.mark.parametrize("crash", ["SIGILL", "SIGSEGV"])
def test_ask_on_a_crashing_build_says_why_and_exits_1(tmp_path: Path, crash: str) -> None:
    stand_in_library(tmp_path / "lib", crash)
    result = lexicoord("ask", "local/smollm2-135m", "hi", check=False, env={"LLAMA_CPP_LIB_PATH": str(tmp_path / "lib")})
    assert result.returncode == 1, f"exit {result.returncode} (a negative status is the signal itself): {result.stderr}"
    assert "CPU instructions this machine cannot run" in result.stderr and "--no-cache-dir" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_campaign_on_a_crashing_build_leaves_no_run_running(tmp_path: Path) -> None:
    stand_in_library(tmp_path / "lib", "SIGSEGV")
    db = tmp_path / "c.db"
    env = {"LLAMA_CPP_LIB_PATH": str(tmp_path / "lib")}
    result = lexicoord("coordination", "run", "--agents", "2", "--items", "2", "--bound", "1", "--run", "crash", "--db", str(db),
                       "--no-cache", check=False, env=env)
    assert result.returncode == 1, f"exit {result.returncode}: {result.stderr}"
    assert "CPU instructions this machine cannot run" in result.stderr
    if db.exists():  # the check comes before the run is opened: nothing is left "running"
        assert [r.status for r in Store(f"sqlite:///{db}").runs() if r.status == "running"] == []


@pytest.mark.parametrize("where", ["README.md", "docs/getting-started.md"])
def test_the_sentence_names_the_makefile_flags_and_the_by_hand_commands_use_them(where: str) -> None:
    flags = portable_flags_in_makefile()
    assert flags == llama_check.PORTABLE_CMAKE_ARGS_X86
    text = (ROOT / where).read_text(encoding="utf-8")
    [by_hand] = [b for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S) if "python3 -m venv" in b][:1]
    assert f'export CMAKE_ARGS="{flags}"' in by_hand
    installs = [line for line in by_hand.splitlines() if "pip install" in line]
    assert installs and all("--no-cache-dir" in line for line in installs), installs


def test_make_install_builds_llama_cpp_without_pips_cache() -> None:
    dry = subprocess.run(["make", "-n", "-B", "install", "VENV=/nonexistent-venv"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    build = [line for line in dry.splitlines() if "pip install" in line and "llama-cpp-python" in line]
    assert build and all("--no-cache-dir" in line for line in build), dry
    first_build = dry.index(build[0])
    assert all(dry.index(line) > first_build for line in dry.splitlines() if "pip install" in line and "-e " in line), \
        "llama-cpp-python is built before the package, whose install would otherwise take a cached wheel"


def fake_venv(root: Path) -> tuple[Path, Path]:
    """A venv whose pip only notes its arguments (and the CMAKE_ARGS it was given) and writes a new build."""
    site, log = root / "site", root / "pip.log"
    (root / "venv" / "bin").mkdir(parents=True)
    python = root / "venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    pip = root / "venv" / "bin" / "pip"
    pip.write_text(f'#!/bin/sh\necho "CMAKE_ARGS=$CMAKE_ARGS $*" >> {log}\n'
                   f"mkdir -p {site}/llama_cpp/lib && touch {site}/llama_cpp/__init__.py\n"
                   f"date +%s%N >> {site}/llama_cpp/lib/libllama.so\n")
    python.chmod(0o755)
    pip.chmod(0o755)
    return root / "venv", log


def builds(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if "llama-cpp-python" in line] if log.exists() else []


def test_make_builds_llama_cpp_once_per_flags_and_installed_copy(tmp_path: Path) -> None:
    venv, log = fake_venv(tmp_path)

    def make(*extra: str) -> None:
        subprocess.run(["make", "-s", "llama-cpp", f"VENV={venv}", *extra], cwd=ROOT, check=True, capture_output=True)

    make()
    [first] = builds(log)
    assert f"CMAKE_ARGS={portable_flags_in_makefile()} " in first or platform.machine() != "x86_64", first
    assert "--no-cache-dir" in first and "--force-reinstall" in first
    make()
    assert len(builds(log)) == 1, "the same flags and the same installed copy: no second build"
    with (tmp_path / "site" / "llama_cpp" / "lib" / "libllama.so").open("a") as fh:
        fh.write("a plain pip install replaced it\n")
    make()
    assert len(builds(log)) == 2, "another copy was installed since: built again"
    make("CMAKE_ARGS=-DGGML_NATIVE=OFF")
    assert len(builds(log)) == 3 and builds(log)[-1].startswith("CMAKE_ARGS=-DGGML_NATIVE=OFF "), "other flags"
    make("CMAKE_ARGS=-DGGML_NATIVE=OFF")
    assert len(builds(log)) == 3


@pytest.mark.embedded
def test_the_installed_build_passes_once_per_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = llama_check.default_probe()
    assert probe is not None and probe.files, "llama-cpp-python's shared libraries are found without importing it"
    assert any(p.name.startswith("libllama") or p.name.startswith("llama") for p in probe.files)
    verdicts = tmp_path / "verdicts.json"
    check(probe, verdicts)
    assert list(json.loads(verdicts.read_text()).values()) == ["ok"]
    monkeypatch.setattr(llama_check.subprocess, "run", lambda *a, **k: pytest.fail("checked twice"))
    check(probe, verdicts)


def test_crash_causes() -> None:
    assert llama_check.crash_cause(-signal.SIGILL) == "SIGILL"
    assert llama_check.crash_cause(-signal.SIGSEGV) == "SIGSEGV"
    assert llama_check.crash_cause(-signal.SIGKILL) is None
    assert llama_check.crash_cause(0) is None and llama_check.crash_cause(1) is None
