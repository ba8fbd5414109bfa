# The two commands of the README: `make serve` and `make test` (`make demo` plays one game in the terminal).
# Each creates .venv if needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# llama.cpp is compiled from source by pip. A portable x86-64 build (AVX2, no AVX-512/AMX):
# a "native" build can use instructions that virtual machines advertise but do not run.
ifeq ($(shell uname -m),x86_64)
CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
export CMAKE_ARGS
endif

.PHONY: demo serve test install install-test llama-cpp browser postgres bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# pip keeps each wheel it builds and hands it back for the same version whatever CMAKE_ARGS says, so a native
# build left by an earlier plain `pip install` would come back. llama-cpp-python is built first, here, without
# pip's cache and with the flags above (the package's install then finds it in place), and built again only
# when the flags, its requirement or the installed copy change: the stamp holds all three.
LLAMA_REQ := $(shell grep -o '"llama-cpp-python[<>=!~][^"]*"' pyproject.toml | head -n 1 | tr -d '"')
LLAMA_STAMP := $(VENV)/.llama-cpp-build
LLAMA_ID = $(BIN)/python -c 'import importlib.util as u, pathlib as p; s = u.find_spec("llama_cpp"); print(*sorted(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for d in (s.submodule_search_locations if s else ()) for f in p.Path(d, "lib").glob("*") if f.is_file()))'

llama-cpp: $(BIN)/python
	@want='$(LLAMA_REQ) $(CMAKE_ARGS)'; \
	if [ "$$(cat $(LLAMA_STAMP) 2>/dev/null)" != "$$want $$($(LLAMA_ID))" ]; then \
	  echo "building $(LLAMA_REQ) with CMAKE_ARGS=$(CMAKE_ARGS) (about five minutes)"; \
	  $(BIN)/pip install -q --force-reinstall --no-deps --no-cache-dir '$(LLAMA_REQ)' && \
	  echo "$$want $$($(LLAMA_ID))" > $(LLAMA_STAMP); \
	fi

install: llama-cpp
	$(BIN)/pip install -q -e .

install-test: llama-cpp
	$(BIN)/pip install -q -e '.[test]'

demo: install
	$(BIN)/lexicoord demo

serve: install
	$(BIN)/lexicoord serve

# The browser tests drive Debian's Chromium (never a downloaded browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The store's tests run on SQLite and on a throwaway cluster of Debian's PostgreSQL server (tests/postgres.py).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }

# Lint, types and the documentation site (a broken link fails it) first, in seconds; then every test, with the ten
# slowest named at the end so that creeping time is seen. The tests run in one process per core (at most four),
# a test file at a time per process: half the suite waits on servers, browsers and subprocesses rather than
# computing, so two processes on two cores take two thirds of the time of one.
test: install-test browser postgres
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site
	$(BIN)/python -m pytest -n auto --maxprocesses=4 --dist loadfile --durations=10

bench: $(BIN)/python postgres
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/runner_overhead.py
	$(BIN)/python benchmarks/embedded_throughput.py
	$(BIN)/python benchmarks/busy_machine.py
	$(BIN)/python benchmarks/cache_speedup.py
	$(BIN)/python benchmarks/coordination_games.py
	$(BIN)/python benchmarks/debate_speed.py
	$(BIN)/python benchmarks/web_latency.py
	$(BIN)/python benchmarks/cogent_speed.py
	$(BIN)/python benchmarks/werewolf_speed.py
	$(BIN)/python benchmarks/werewolf_memory.py
	$(BIN)/python benchmarks/werewolf_rooms.py
	$(BIN)/python benchmarks/viewer_speed.py
	$(BIN)/python benchmarks/dataset_memory.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/shared_run.py
	$(BIN)/python benchmarks/report_speed.py
	$(BIN)/python benchmarks/study_load.py
	$(BIN)/python benchmarks/study_load.py --conditions 2
	$(BIN)/python benchmarks/gate_speed.py
