"""The suites under pytest-benchmark, run as a user runs them: a pytest subprocess from the
repository root, writing --benchmark-json; machine_info must carry pqbench's fingerprint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.measure import environment
from tests.helpers import REPO

pytestmark = pytest.mark.process


def _pytest(*args: str, cwd: Path = REPO,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env={**{k: v for k, v in os.environ.items()
                                  # a suite run with -n: this pytest is not an xdist worker
                                  if not k.startswith("PYTEST_XDIST")}, **(env or {})})


def _benchmark(tmp_path: Path, case: str, env: dict[str, str] | None = None
               ) -> dict[str, object]:
    out = tmp_path / "out.json"
    done = _pytest("benchmarks/", "--benchmark-only", "--benchmark-json", str(out),
                   "--benchmark-max-time", "0.01", "--benchmark-min-rounds", "3",
                   "-k", case, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    document: dict[str, object] = json.loads(out.read_text())
    return document


def test_one_benchmark_carries_the_os_build_in_machine_info(tmp_path: Path) -> None:
    document = _benchmark(tmp_path, "X25519-cryptography-derive")
    machine_info = document["machine_info"]
    assert isinstance(machine_info, dict)
    assert machine_info["os_build"] == environment.collect()["os_build"]
    assert machine_info["cpu_flags"] == environment.cpu()["flags"]
    assert machine_info["libraries"]["cryptography"]
    assert machine_info["pqbench"]["testbed"] == machine_info["testbed"]
    benchmarks = document["benchmarks"]
    assert isinstance(benchmarks, list) and len(benchmarks) == 1
    extra = benchmarks[0]["extra_info"]
    assert (extra["algorithm"], extra["implementation"], extra["operation"]) == (
        "X25519", "cryptography", "derive")
    assert extra["sizes"]["public_key"] == 32


def test_the_fingerprint_is_added_without_plugin_autoloading(tmp_path: Path) -> None:
    """benchmarks/conftest.py registers the plugin itself when entry points are not loaded."""
    document = _benchmark(tmp_path, "Ed25519-cryptography-sign",
                          env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                               "PYTEST_ADDOPTS": "-p pytest_benchmark.plugin"})
    machine_info = document["machine_info"]
    assert isinstance(machine_info, dict) and machine_info["os_build"]


def test_the_main_suite_does_not_collect_benchmarks() -> None:
    done = _pytest("--collect-only", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected and not any(line.startswith("benchmarks") for line in collected)


def test_the_plugin_does_not_break_sessions_without_pytest_benchmark(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert sum(range(4)) == 6\n")
    done = _pytest("-p", "no:benchmark", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_native_loop_records_time_per_operation(tmp_path: Path) -> None:
    """Each pytest-benchmark round of a native case is one C loop round, recorded as its
    elapsed time divided by its operations: the statistics are per operation."""
    document = _benchmark(tmp_path, "ML-KEM-512-liboqs-encaps")
    (bench,) = document["benchmarks"]  # type: ignore[misc]
    extra = bench["extra_info"]
    assert extra["implementation"] == "liboqs" and extra["timing"].startswith("pqbench native")
    per_op = sorted(ns / ops / 1e9 for ns, ops in zip(extra["elapsed_ns"], extra["ops"],
                                                       strict=True))
    assert bench["stats"]["rounds"] == len(per_op) >= 3
    assert bench["stats"]["min"] == pytest.approx(per_op[0], rel=1e-9)
    assert bench["stats"]["max"] == pytest.approx(per_op[-1], rel=1e-9)
    assert extra["cycles_per_op"] is None or extra["cycles_per_op"] > 0
