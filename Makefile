# gpuprice: the two README commands work on a fresh machine with Python 3.11 and pip.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export GPUPRICE_HOME ?= $(CURDIR)/data

.PHONY: demo test dev bench install clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "make: $(PYTHON) not found; set PYTHON=/path/to/python3.11" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/gpuprice run --source archive --date $$($(BIN)/python -c "from scrapers.archive import newest_archive_date; from warehouse.settings import archive_dir; print(newest_archive_date(archive_dir()))")

test: $(STAMP)
	$(BIN)/python -m pytest

dev: $(STAMP)
	@mkdir -p $(GPUPRICE_HOME)/dagster
	@test -f $(GPUPRICE_HOME)/dagster/dagster.yaml || cp pipelines/dagster.yaml $(GPUPRICE_HOME)/dagster/dagster.yaml
	DAGSTER_HOME=$(GPUPRICE_HOME)/dagster $(BIN)/dg dev

bench: $(STAMP)
	$(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) *.egg-info
