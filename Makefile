# The two commands of the README: `make demo` and `make test`. Both create .venv if needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

# llama.cpp is compiled from source by pip. A portable x86-64 build (AVX2, no AVX-512/AMX):
# a "native" build can use instructions that virtual machines advertise but do not run.
ifeq ($(shell uname -m),x86_64)
CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
export CMAKE_ARGS
endif

.PHONY: demo serve test install install-test browser postgres bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install -q -e .

install-test: $(BIN)/python
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

# Lint and types first (seconds), then every test.
test: install-test browser postgres
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: $(BIN)/python postgres
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/runner_overhead.py
	$(BIN)/python benchmarks/embedded_throughput.py
	$(BIN)/python benchmarks/cache_speedup.py
	$(BIN)/python benchmarks/coordination_games.py
	$(BIN)/python benchmarks/debate_speed.py
	$(BIN)/python benchmarks/web_latency.py
	$(BIN)/python benchmarks/cogent_speed.py
	$(BIN)/python benchmarks/werewolf_speed.py
	$(BIN)/python benchmarks/werewolf_rooms.py
	$(BIN)/python benchmarks/viewer_speed.py
	$(BIN)/python benchmarks/shared_run.py
