"""pytest plugin: pytest-benchmark histories carry pqbench's environment fingerprint.

Registered through the `pytest11` entry point, so any pytest-benchmark run in an
environment where pqbench is installed records the OS build, CPU crypto flags and library
versions in its `machine_info`.
"""

from __future__ import annotations

from typing import Any


def pytest_benchmark_update_machine_info(config: Any, machine_info: dict[str, Any]) -> None:
    # Imported lazily: the fingerprint loads the crypto libraries, which plain test
    # sessions that never benchmark should not pay for.
    from pqbench import environment

    fingerprint = environment.collect()
    machine_info["pqbench"] = fingerprint
    machine_info["os_build"] = fingerprint["os_build"]
    machine_info["cpu_flags"] = fingerprint["cpu_flags"]
    machine_info["libraries"] = fingerprint["libraries"]
