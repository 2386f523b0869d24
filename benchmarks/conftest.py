"""pytest-benchmark fixtures for pqbench's suites (`pytest benchmarks/ --benchmark-only`).

The main test suite never collects this directory (pyproject's testpaths is `tests`). The
pqbench plugin that writes the environment fingerprint into `machine_info` normally loads
through its `pytest11` entry point; with plugin autoloading disabled
(PYTEST_DISABLE_PLUGIN_AUTOLOAD) it is registered here instead, exactly once.
"""

from __future__ import annotations

from typing import Any

import pytest

from pqbench import pytest_plugin as pqbench_plugin


def pytest_configure(config: pytest.Config) -> None:
    manager = config.pluginmanager
    if not manager.is_registered(pqbench_plugin) and not manager.is_blocked("pqbench"):
        manager.register(pqbench_plugin, "pqbench")


@pytest.fixture
def native_round_seconds(request: pytest.FixtureRequest) -> float:
    """One native round lasts max_time / min_rounds, pytest-benchmark's own budget."""
    config = request.config
    max_time: Any = config.getoption("benchmark_max_time", 1.0)
    rounds: Any = config.getoption("benchmark_min_rounds", 5)
    return max(float(max_time) / max(int(rounds), 1), 1e-4)
