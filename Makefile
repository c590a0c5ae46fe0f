# The two commands: `make demo` and `make test`. Both set up everything first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.rein-installed

.PHONY: demo test setup lint typecheck eval pytest extension screenshots bench clean language-servers

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

# The language servers the analyzer gate's end-to-end tests run (gopls,
# clangd, shellcheck from Debian; typescript-language-server, typescript and
# bash-language-server pinned into .tools/): installed once, a stamp after.
language-servers:
	@scripts/install-language-servers.sh

demo: setup
	$(VENV)/bin/rein demo

lint: setup
	$(VENV)/bin/ruff check server tests
	$(VENV)/bin/ruff format --check server tests
	$(VENV)/bin/lint-imports --no-logo

typecheck: setup
	$(VENV)/bin/mypy

# Two workers (pytest-xdist): most tests wait on a subprocess (rein serve,
# rein run, an analyzer), so two keep both cores busy; e2e tests still run
# last (tests/conftest.py orders them, the workers take them in that order).
# The 30 slowest tests are printed: the suite's budget is 12 minutes.
pytest: setup language-servers
	$(VENV)/bin/pytest -q -n 2 --durations=30

eval: setup
	$(VENV)/bin/rein eval --json .eval-scores.json

extension: setup
	$(MAKE) -C vscode-client test

# lint, typecheck, eval, pytest and the extension's suite are independent:
# they run side by side (pytest, the longest, first; the others mostly wait on
# their subprocesses or end within its first minute), each one's output
# printed in one piece when it ends; any one failing fails `make test`. The
# setup they share runs once, first (the language servers too: their apt-get
# must not meet the extension's chromium install).
test: setup language-servers
	$(MAKE) --no-print-directory -j5 --output-sync=target pytest lint typecheck eval extension

# Refresh the pictures in docs/images (the tests only write vscode-client/build/screenshots).
screenshots: setup
	$(MAKE) -C vscode-client screenshots

bench: setup
	$(VENV)/bin/rein bench all

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
