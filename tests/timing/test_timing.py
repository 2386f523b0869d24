from __future__ import annotations

from pqbench.data.record.rounds import LoopResult
from pqbench.timing.loop import run_for


def test_loop_runs_at_least_the_requested_time_and_counts_every_call() -> None:
    calls: list[None] = []
    result = run_for(lambda: calls.append(None), 0.05)
    assert result.elapsed_ns >= 50_000_000
    assert result.ops == len(calls) > 0
    assert result.cycles is None


def test_fast_operations_are_batched_so_the_clock_is_not_read_per_call() -> None:
    # A no-op runs millions of times; the batch doubling must get past a thousand calls.
    result = run_for(lambda: None, 0.02)
    assert result.ops > 1000


def test_a_slow_operation_still_completes_once() -> None:
    result = run_for(lambda: sum(range(10_000)), 1e-9)
    assert result.ops == 1


def test_loop_result_rates() -> None:
    r = LoopResult(ops=500, elapsed_ns=250_000_000, cycles=1_000_000)
    assert r.ops_per_sec == 2000.0
    assert r.cycles_per_op == 2000.0
    assert LoopResult(ops=1, elapsed_ns=1).cycles_per_op is None
