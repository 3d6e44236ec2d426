# Set-up comes from the repository alone: `make run` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export PORT

.PHONY: setup run test fuzz lint bench lock clean event-schemas

# requirements.txt names what we depend on; requirements.lock pins every transitive dependency
# with its hashes (`make lock`), and only that is installed.
$(VENV)/.installed: requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	touch $@

setup: $(VENV)/.installed

# Readable log lines on the terminal (production's default is JSON lines); LOG_FORMAT=json make run for those.
run: export LOG_FORMAT ?= console
run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py seed_demo --with-key
	@echo "Serving on http://localhost:$(PORT) (web, Celery worker and beat; a process that dies is restarted)"
	$(PY) -m tools.runner

test: setup
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# Contract fuzzing (tests/fuzz): schemathesis from the service's own OpenAPI schema against a running
# stack, FUZZ_MAX_EXAMPLES (default 100) cases per operation; `make test` runs only a smoke version.
fuzz: setup
	$(VENV)/bin/pytest -m fuzz tests/fuzz $(PYTEST_ARGS)

# Refresh docs/event-schemas.json, the event bodies receivers were promised, after a compatible change
# (added kinds, fields or values); a removed, renamed or retyped field is refused (docs/webhooks.md).
event-schemas: setup
	$(PY) manage.py event_schemas --write

# Lint, format and the import layers (pyproject.toml); .ci/run fails on any of them.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

# The service as production runs it under wrk, against a bare Django reference (docs/performance.md).
# BENCH_ARGS=--strict fails on a missed target.
bench: setup
	$(PY) -m bench.run $(BENCH_ARGS)

# Regenerate requirements.lock after editing requirements.txt (a test fails until the two agree).
lock:
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet pip-tools==7.6.2
	$(VENV)-lock/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-find-links --output-file requirements.lock requirements.txt

clean:
	rm -rf $(VENV) $(VENV)-lock var
