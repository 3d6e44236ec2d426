# Set-up comes from the repository alone: `make run` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export PORT

.PHONY: setup run test lint bench clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

setup: $(VENV)/.installed

run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py seed_demo --with-key
	@echo "Serving on http://localhost:$(PORT) (web, Celery worker and beat; a process that dies is restarted)"
	$(PY) -m config.runner

test: setup
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# Lint, format and the import layers (pyproject.toml); .ci/run fails on any of them.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

# The service as production runs it under wrk, against a bare Django reference (docs/performance.md).
# BENCH_ARGS=--strict fails on a missed target.
bench: setup
	$(PY) -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var
