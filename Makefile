# The two commands a newcomer needs (see README.md):
#   make run    set everything up, run the quick suite, store it, print the table
#   make test   set everything up, then lint, type-check, build the docs and run the tests
#               (what the slow tests build is made first, beside the lint: make test-deps)
# and for a developer:
#   make check  the fast lane after every change: lint, types, and every test that starts
#               no process and measures nothing (markers in pyproject.toml), about a minute
#   make docs   the documentation site (mkdocs.yml, docs/) built strictly into site/
#   make lock   renew constraints.txt, the locked dependency set, after changing pyproject.toml
# Both are idempotent; the virtual environment lives in .venv/ and liboqs is built once
# into a per-user cache outside the repository (`python -m pqbench.libraries.liboqs --all` for every
# algorithm, not only the NIST standards and HQC).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pqbench-installed

.PHONY: setup run test test-deps check lint lock bytecode docs reports browser

#: The installer `make setup` fills .venv with (pinned, as everything is).
UV_VERSION := 0.13.9
#: mypy's cache, per user as liboqs's build is: a fresh clone type-checks in a fraction of a
#: second instead of 8 (mypy checks each cached module against its source's hash).
MYPY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/pqbench-dev/mypy

# Every dependency at the version constraints.txt locks (`make lock` renews it). uv installs
# them in about 8 s where pip takes 22 (it links from its cache rather than unpacking every
# file again); where uv cannot be installed, pip installs the same locked set, and says so.
# setuptools tells every editable install pip makes, as a warning, that a folder named like
# the package may shadow it (a 150-column banner); pqbench's checkout is that folder, on
# purpose.
$(STAMP): pyproject.toml setup.py constraints.txt $(wildcard pqbench/timing/csrc/*.[ch]) \
		pqbench/measure/files/_xts.c pqbench/measure/memory/_memhook.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "make setup: installing the locked dependencies (constraints.txt) into $(VENV)"
	@if $(BIN)/python -m pip install --quiet uv==$(UV_VERSION); then \
	    $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode \
	        -c constraints.txt -e '.[test]'; \
	else \
	    echo "make setup: uv could not be installed; pip installs the same locked set" >&2; \
	    PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet \
	        -c constraints.txt -e '.[test]'; \
	fi
	touch $@

# The lock: every package `make setup` installs, at one version, for every platform and
# Python pqbench supports. Renew it after changing a dependency in pyproject.toml
# (tests/project/test_lock.py fails until then).
lock: setup
	$(BIN)/uv pip compile --quiet --custom-compile-command "make lock" pyproject.toml \
	    --extra test --universal --python-version 3.11 -o constraints.txt

# liboqs (cargo fetch, cmake build: standard library only) and the virtual environment (pip)
# do not need each other, so they run side by side; both are waited for and either failing
# fails set-up. Without cargo the first step defers to the last one, which then runs
# liboqs-python's own installer. The last step finds the cache and says what pqbench uses.
setup:
	@$(PYTHON) -m pqbench.libraries.liboqs --no-fallback >/dev/null & liboqs=$$!; \
	$(MAKE) --no-print-directory $(STAMP); venv=$$?; \
	wait $$liboqs; oqs=$$?; \
	test $$venv -eq 0 || echo "make setup: installing .venv failed (exit $$venv)" >&2; \
	test $$oqs -eq 0 || echo "make setup: building liboqs failed (exit $$oqs)" >&2; \
	test $$venv -eq 0 && test $$oqs -eq 0
	$(BIN)/python -m pqbench.libraries.liboqs

run: setup
	$(BIN)/pqbench speed

lint: setup
	$(BIN)/ruff check pqbench tests benchmarks
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)

# Strict: a broken link or anchor fails. `make test` does not call it: the test suite builds
# the site strictly itself (tests/project/test_docs.py), once.
docs: setup
	$(BIN)/mkdocs build --strict

# The whole suite, as CI runs it (.ci/run): the 25 slowest tests are printed at the end, and
# each test has a time limit (pyproject.toml). It runs in JOBS worker processes, one more than
# the CPUs (2 cores: 3): its tests wait on the processes they start for about a tenth of
# the time, which the extra worker fills (on 2 cores, three workers took 703-733 s where two
# took 781-842 s, and four were no faster than three: docs/measurements.md). Each takes
# whole test files so that a module's fixtures are set up once; JOBS=0 runs it in this one
# process. A subset:
# `$(BIN)/python -m pytest tests/ROOM`, `-k WORDS`, `-m "not process"` (docs/contributing.md).
# What the slow tests build (the Debian 13 userland, the rebuilt libcrypto, the stack
# workers, an older aws-lc-rs, the pip builds of the bisect tests) is made first, side by
# side into the per-user cache, while lint and bytecode run: on a newcomer's first run the
# suite then finds each made instead of making it, one after another, inside its own time.
test: JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$((n + 1)))
test: setup
	@$(BIN)/python -m tests.helpers.deps & deps=$$!; \
	$(MAKE) --no-print-directory lint bytecode browser; checked=$$?; \
	wait $$deps; test $$checked -eq 0
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(JOBS) --dist loadfile --durations=25

# The same, alone: `python -m tests.helpers.deps --list` names what it makes.
test-deps: setup
	$(BIN)/python -m tests.helpers.deps

# The headless Chromium the tests of `pqbench publish` render the site in: Debian's
# `chromium` package, installed with apt where its browser binary is missing (its wrapper
# script, /usr/bin/chromium, trips on its own /dev/shm check here; the tests run the binary
# beside it, tests/helpers/browser.py). Without root or apt it says what is missing and
# goes on: the browser tests then fail with the same words, they are never skipped.
CHROMIUM := /usr/lib/chromium/chromium
browser:
	@test -x $(CHROMIUM) || { \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	        echo "make browser: installing chromium with apt-get (the site's browser tests)"; \
	        DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; \
	    else \
	        echo "make browser: no $(CHROMIUM), and no root or apt-get to install it:" \
	             "as root, apt-get install -y chromium; the browser tests fail until then" >&2; \
	    fi; }

# pqbench's own modules compiled once (those out of date only), so that each of the
# hundreds of `python -m pqbench` processes the tests start reads them rather than compiling
# them again: with PYTHONDONTWRITEBYTECODE set (as on CI), Python would never keep them.
# For the same reason the test lanes run pytest with it unset: pytest then keeps the test
# modules it rewrites for its assertions (about 5 s of CPU per collection).
bytecode: setup
	$(BIN)/python -m compileall -q pqbench tests

# The fast lane: no test that starts a process or measures (`-m "not process and not slow"`),
# in JOBS processes, two by default (its tests are independent: any worker takes any test;
# they start no process, so a third worker would only add its own collection).
check: JOBS ?= 2
check: lint bytecode
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(JOBS) -m "not process and not slow"

# The example reports under reports/, measured afresh (reports/regenerate.sh says how).
reports: setup
	sh reports/regenerate.sh
