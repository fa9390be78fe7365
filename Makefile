# `make run` and `make test` work on a fresh machine: every install step is here or in scripts/.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The stamp changes whenever a requirements file does, so edits reinstall and nothing else does.
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt | sha1sum | cut -c1-12)

# pytest's workers: three on CI's 2 cores, because the tests wait on servers and the browser more
# than they compute. With two, sampled CPU time was about half the machine's (839 s in 819 s on two
# cores); three took the idle suite from 754 s to 631 s (docs/seen-failing.md, fifth session).
# Files go out in tests/conftest.py's order (browser files first), not xdist's most-tests-first.
PYTEST_WORKERS ?= 3

.PHONY: run test lint typecheck pytest setup-test setup-llama setup-parts bench clean

$(STAMP):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	rm -f $(VENV)/.installed-* && touch $@

# The app on 127.0.0.1:8501; the local model is built once when no provider key is configured.
run: $(STAMP)
	@PY=$(PY) bash scripts/run_app.sh

# Each scripts/setup_*.sh prepares one real part the tests use (llama-server, MCP servers,
# Chromium, PostgreSQL, axe-core); each caches its slow work and returns at once when it is already done.
setup-test: setup-llama setup-parts

# Not after setup-llama: under `make -j2` these run while llama-server builds.
setup-parts: $(STAMP)
	@for script in $(filter-out scripts/setup_llama.sh,$(wildcard scripts/setup_*.sh)); do \
	  start=$$SECONDS; PYTHON=$(PY) bash "$$script" || exit 1; took=$$((SECONDS - start)); \
	  if [ $$took -ge 5 ]; then echo "yiem: $$script took $$took s"; fi; \
	done

# Needs only the system's Python, so `make test` builds it beside the venv, lint and type checks.
setup-llama:
	@start=$$SECONDS; PYTHON=$(PYTHON) bash scripts/setup_llama.sh || exit 1; took=$$((SECONDS - start)); \
	if [ $$took -ge 5 ]; then echo "yiem: scripts/setup_llama.sh took $$took s"; fi

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy yiem
	$(VENV)/bin/mypy app.py ui bench/dashboard.py

pytest: setup-test
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Two jobs at once: the one-time llama-server build overlaps the installs, lint and type checks.
test:
	@$(MAKE) --no-print-directory -j2 lint typecheck setup-test
	@$(MAKE) --no-print-directory pytest

# Every benchmark with the arguments docs/benchmarks.md reports (the 1M-row one takes minutes).
bench: setup-test
	$(PY) bench/startup.py --runs 10
	$(PY) bench/loop.py
	$(PY) bench/providers.py --requests 200 --chunks 100
	$(PY) bench/mcp.py --calls 500 --rounds 5 --connects 5
	$(PY) bench/checks.py --calls 1000 --rounds 5
	$(PY) bench/chat_stop.py
	$(PY) bench/chat_page.py
	$(PY) bench/dashboard.py --sizes 10000 100000 1000000 --repeat 3
	$(PY) bench/experiments.py --items 10000 --repeat 3 --http-items 1000 --peer-repeat 1 --ray
	$(PY) bench/compare.py --rounds 5
	$(PY) bench/example_experiment.py --rounds 3
	$(PY) bench/llama_threads.py --busy 0
	$(PY) bench/llama_threads.py --busy 3
	$(PY) bench/mcp_apps.py --draws 15 --reruns 15

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .import_linter_cache .grimp_cache
