"""The quick suite under pytest-benchmark: one benchmark per (algorithm, implementation, operation).

    pytest benchmarks/ --benchmark-only --benchmark-json out.json

Set-up happens outside the clock through the implementation's own `prepare` (keys,
messages and ciphertexts exist before timing starts), as in `pqbench speed`.

* Python implementations (liboqs-python, cryptography) hand back a zero-argument callable;
  pytest-benchmark times it with its own calibrated loop, as any Python benchmark.
* Native loops (liboqs, libcrypto) run the operation in C for a given duration and report
  (ops, elapsed_ns, cycles) - the one timing contract. Calling them once per operation
  from Python would time the call, not the operation. So each pytest-benchmark round is
  one native round, run in pedantic mode, and the round's time per operation
  (elapsed_ns / ops, measured by the C loop's monotonic clock) is what pytest-benchmark
  records: the fixture reads a clock that advances by exactly that amount per round. The
  statistics, histories and `pytest-benchmark compare` then see seconds per operation for
  every row, native or not. Ops, cycles and sizes go to `extra_info`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pqbench.catalog import algorithms
from pqbench.catalog.algorithms.base import Algorithm
from pqbench.data.record.rounds import LoopResult
from pqbench.libraries.implementations import all_implementations
from pqbench.libraries.implementations.base import Implementation, PythonOperation, TimedOperation


@dataclass(frozen=True)
class Case:
    """One (algorithm, implementation, operation) that the implementation offers here."""

    algorithm: Algorithm
    implementation: Implementation
    operation: str

    @property
    def id(self) -> str:
        return f"{self.algorithm.name}-{self.implementation.name}-{self.operation}"


def quick_cases() -> list[Case]:
    """The quick suite's operations through every implementation that offers them.

    Pairs an implementation does not offer (liboqs has no X25519) or cannot run here are
    left out at collection rather than skipped: they are not benchmarks of this machine.
    """
    cases = []
    for alg in algorithms.resolve(algorithms.QUICK_SUITE):
        for impl in all_implementations():
            if impl.unavailable_reason():
                continue
            cases += [Case(alg, impl, op) for op in alg.operations if impl.offers(alg, op) is None]
    return cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        cases = quick_cases()
        metafunc.parametrize("case", cases, ids=[c.id for c in cases])


class LoopClock:
    """A pytest-benchmark timer that advances by the native loop's time per operation."""

    __name__ = "pqbench_native_loop_clock"

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds

    def advance(self, result: LoopResult) -> None:
        if result.ops == 0:
            raise RuntimeError("the native loop completed no operation in its round")
        self.seconds += result.elapsed_ns / result.ops / 1e9


def _native(benchmark: Any, prepared: TimedOperation, round_seconds: float,
            rounds: int) -> list[LoopResult]:
    clock = LoopClock()
    if not hasattr(benchmark, "_timer"):
        raise RuntimeError("this pytest-benchmark has no per-fixture timer; pqbench's native "
                           "benchmarks need pytest-benchmark 5.x")
    benchmark._timer = clock  # the documented reason is in the module docstring
    results: list[LoopResult] = []

    def one_round() -> None:
        result = prepared.run(round_seconds)
        clock.advance(result)
        results.append(result)

    benchmark.pedantic(one_round, rounds=rounds, iterations=1, warmup_rounds=1)
    return results[1:]  # the warm-up round is not part of the statistics


def test_speed(benchmark: Any, case: Case, native_round_seconds: float) -> None:
    prepared = case.implementation.prepare(case.algorithm, case.operation)
    benchmark.group = f"{case.algorithm.name} {case.operation}"
    benchmark.extra_info.update(
        algorithm=case.algorithm.name, implementation=case.implementation.name,
        operation=case.operation, sizes=dict(prepared.sizes),
        attributes={k: v for k, v in prepared.attributes.items()})
    if isinstance(prepared, PythonOperation):
        benchmark.extra_info["timing"] = "pytest-benchmark loop around the prepared call"
        benchmark(prepared.call)
        return
    rounds = int(benchmark._min_rounds) if hasattr(benchmark, "_min_rounds") else 5
    results = _native(benchmark, prepared, native_round_seconds, max(rounds, 1))
    cycles = [r.cycles_per_op for r in results if r.cycles_per_op is not None]
    benchmark.extra_info.update(
        timing="pqbench native loop (C), one pytest-benchmark round per native round",
        counter=prepared.counter, ops=[r.ops for r in results],
        elapsed_ns=[r.elapsed_ns for r in results],
        cycles_per_op=sorted(cycles)[len(cycles) // 2] if cycles else None)
