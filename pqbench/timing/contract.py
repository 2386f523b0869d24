"""The one timing contract every loop honours.

A loop is given a duration, runs the operation until at least that much monotonic time has
passed, and reports how many operations it completed, the elapsed nanoseconds, and the
cycle-counter delta where the CPU offers one. Callers never care which loop ran.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoopResult:
    """One timed round: `ops` operations in `elapsed_ns` nanoseconds."""

    ops: int
    elapsed_ns: int
    cycles: int | None = None  # counter ticks over the round, None if no counter

    @property
    def ops_per_sec(self) -> float:
        return self.ops * 1e9 / self.elapsed_ns if self.elapsed_ns > 0 else 0.0

    @property
    def cycles_per_op(self) -> float | None:
        if self.cycles is None or self.ops == 0:
            return None
        return self.cycles / self.ops
