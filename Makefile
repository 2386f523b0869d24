# The two commands a newcomer needs (see README.md):
#   make run    set everything up, run the quick suite, store it, print the table
#   make test   set everything up, then lint, type-check and run the tests
# Both are idempotent; the virtual environment lives in .venv/ and liboqs is built once
# into a per-user cache outside the repository.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pqbench-installed

.PHONY: setup run test lint

$(STAMP): pyproject.toml setup.py $(wildcard pqbench/timing/csrc/*.[ch]) pqbench/files/_xts.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

setup: $(STAMP)
	$(BIN)/python -m pqbench.liboqs

run: setup
	$(BIN)/pqbench speed

lint: setup
	$(BIN)/ruff check pqbench tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest
