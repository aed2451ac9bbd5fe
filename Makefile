PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA_DIR ?= data

.PHONY: run test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/brain serve --host 127.0.0.1 --port 8787 --data-dir $(DATA_DIR)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/capture.py

clean:
	rm -rf $(VENV) .pytest_cache
