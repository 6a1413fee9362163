# gpuprice: the two README commands work on a fresh machine with Python 3.11 and pip.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PACKAGE_DIRS := gpuprice scrapers models warehouse reports pipelines
export GPUPRICE_HOME ?= $(CURDIR)/data

.PHONY: demo test test-fast lint format dev bench lock install clean

# Installs only what requirements.lock pins (hash-checked), then the project itself without
# touching those pins: the versions the tests ran with are the versions a fresh machine gets.
$(STAMP): pyproject.toml requirements.lock
	@test -n "$(PYTHON)" || { echo "make: python3.11 not found; set PYTHON=/path/to/python3.11" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	@# An editable install leaves gpuprice's own modules uncompiled (pip compiles only what it copies);
	@# compiling them here spares every run that sets PYTHONDONTWRITEBYTECODE recompiling them.
	$(BIN)/python -m compileall -q $(PACKAGE_DIRS) >/dev/null
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/gpuprice run --source archive --date $$($(BIN)/python -c "from gpuprice.scrapers.archive import archive_or_sample, newest_archive_date; from gpuprice.settings import Settings; print(newest_archive_date(archive_or_sample(Settings.from_env().archive)))")

test: $(STAMP)
	$(BIN)/python -m pytest

# The suite without the slow and browser tests: the loop to run while editing.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not browser"

# mypy checks the installed namespace (gpuprice.scrapers is scrapers/, ...) through a link tree made
# here, since it cannot follow the default editable install's import hook (python/mypy#13392) and
# has no option mapping a package to another folder. The documented alternatives were tried and
# rejected: setuptools' editable_mode=strict links only the files present at install time (a module
# added later is neither importable nor type-checked until `make install` runs again, and mypy
# then also wants a py.typed marker); editable_mode=compat puts scrapers/, models/... on sys.path
# as top-level packages, which the package mapping exists to prevent.
TYPECHECK := build/typecheck/gpuprice
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)
	@for f in gpuprice/*; do ln -s ../../../$$f $(TYPECHECK)/; done
	@for d in scrapers models warehouse reports pipelines; do ln -s ../../../$$d $(TYPECHECK)/$$d; done
	cd build/typecheck && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p gpuprice

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The webserver (UI on http://$(DEV_HOST):$(DEV_PORT)) and the daemon, on the code location
# gpuprice.pipelines.definitions, with DAGSTER_HOME=$GPUPRICE_HOME/dagster: the instance the CLI's
# runs are recorded in; its dagster.yaml is pipelines/dagster.yaml, refreshed when that changes.
# pipelines/dev.py runs `dagster dev` and stops all it started within seconds of Ctrl-C or SIGTERM.
DEV_HOST ?= 127.0.0.1
DEV_PORT ?= 3000
dev: $(STAMP)
	@home=$$($(BIN)/python -m gpuprice.pipelines.instance) && \
	  echo "DAGSTER_HOME=$$home" && \
	  DAGSTER_HOME=$$home exec $(BIN)/python -m gpuprice.pipelines.dev $(DEV_HOST) $(DEV_PORT)

bench: $(STAMP)
	$(BIN)/python -m bench.run

# Re-resolves every pin (hashes included) within pyproject.toml's ranges; commit the result.
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra dev --generate-hashes --universal \
	  --python-version 3.11 --index-url https://pypi.org/simple -o requirements.lock

clean:
	rm -rf $(VENV) *.egg-info
