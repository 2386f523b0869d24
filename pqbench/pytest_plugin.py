"""pytest plugin: pytest-benchmark histories carry pqbench's environment fingerprint.

Registered through the `pytest11` entry point, so any pytest-benchmark run in an
environment where pqbench is installed records the OS build, CPU crypto flags and library
versions in its `machine_info` (and so `pytest-benchmark compare` can tell two OS builds
apart). The hook is optional: pytest sessions without pytest-benchmark (or with
`-p no:benchmark`) must not fail on a hook nobody declared.
"""

from __future__ import annotations

from typing import Any

import pytest

#: machine_info keys pqbench adds; the whole fingerprint goes under "pqbench".
MACHINE_INFO_KEYS = ("os_build", "cpu_model", "cpu_flags", "libraries", "knobs", "testbed")


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_machine_info(config: Any, machine_info: dict[str, Any]) -> None:
    # Imported lazily: the fingerprint loads the crypto libraries, which plain test
    # sessions that never benchmark should not pay for.
    from pqbench.measure import environment

    fingerprint = environment.collect()
    machine_info["pqbench"] = fingerprint
    machine_info["os_build"] = fingerprint["os_build"]
    machine_info["cpu_model"] = fingerprint["cpu"].get("model")
    machine_info["cpu_flags"] = fingerprint["cpu_flags"]
    machine_info["libraries"] = fingerprint["libraries"]
    # Only the knobs that are set: an OPENSSL_ia32cap mask changes what is measured.
    machine_info["knobs"] = {k: v for k, v in fingerprint["knobs"].items() if v}
    machine_info["testbed"] = fingerprint["testbed"]
