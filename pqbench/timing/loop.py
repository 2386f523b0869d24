"""The Python timing loop: run a zero-argument callable for a fixed time.

Same contract as the native loop (see contract.py). The clock is read once per batch, and
the batch grows until a batch lasts about a millisecond, so reading the clock costs a
negligible share of the time even for sub-microsecond operations.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pqbench.data.record.rounds import LoopResult

_TARGET_BATCH_NS = 1_000_000


def run_for(operation: Callable[[], object], seconds: float) -> LoopResult:
    """Call `operation` until at least `seconds` of monotonic time have passed."""
    budget_ns = max(int(seconds * 1e9), 1)
    clock = time.perf_counter_ns
    ops = 0
    batch = 1
    cpu_start = time.thread_time_ns()
    start = clock()
    now = start
    while now - start < budget_ns:
        batch_start = now
        for _ in range(batch):
            operation()
        ops += batch
        now = clock()
        if now - batch_start < _TARGET_BATCH_NS // 2:
            batch *= 2
    return LoopResult(ops=ops, elapsed_ns=now - start, cycles=None,
                      cpu_ns=time.thread_time_ns() - cpu_start)
